// Package mysql is txsink's dialect for MySQL and MariaDB, over
// github.com/go-sql-driver/mysql.
//
// Sessions run in strict SQL mode (STRICT_ALL_TABLES, NO_ZERO_DATE,
// NO_ZERO_IN_DATE, ERROR_FOR_DIVISION_BY_ZERO) and in UTC, so the server
// refuses what it would otherwise truncate, and TIMESTAMP values mean the
// same instant whatever the server's zone; a URL parameter that would
// change either, or otherwise how values are written or read, is refused
// when the target is opened (see params.go). Upserts use MariaDB's
// VALUES(c) form, or MySQL 8.0.20+'s row alias, chosen from the server's
// version.
//
// Groups of DefaultBulkMinRows rows and more go through LOAD DATA LOCAL
// INFILE (the dialect is a target.Loader, see load.go), streamed from
// memory inside the unit's transaction, whenever that provably writes what
// the statements would; it needs local_infile=ON on the server (MariaDB's
// default; SET PERSIST local_infile=ON on MySQL 8), and a server that
// refuses it is detected and written with statements. The URL parameter
// bulk-load=off turns it off.
package mysql

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	redactpkg "github.com/txsink/txsink/internal/redact"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/sink/sqlsink"
)

func init() {
	// The driver logs a line of its own for every broken connection; txsink
	// returns those errors, classified, and logs them once itself.
	mysqldrv.SetLogger(discard{})
}

type discard struct{}

func (discard) Print(...any) {}

// Dialect is the MySQL/MariaDB dialect. It is safe for concurrent use; its
// bulk-load path (Load) remembers, per server and table, what it has read
// from the catalog, so use one Dialect per server, by pointer.
type Dialect struct {
	// RowAlias selects MySQL 8.0.20+'s "AS new ... c = new.c" upsert form;
	// false selects "c = VALUES(c)", the only form MariaDB has.
	RowAlias bool
	// MariaDB reports a MariaDB server.
	MariaDB bool
	// MaxPacket is the server's max_allowed_packet in bytes.
	MaxPacket int
	// NoBulkLoad turns the LOAD DATA LOCAL INFILE path (Load) off, so
	// every group is written with statements. The URL parameter
	// bulk-load=off sets it.
	NoBulkLoad bool
	// BulkMinRows is the fewest rows of a group Load takes; 0 means
	// DefaultBulkMinRows.
	BulkMinRows int
	// BulkStaging lets Load take upserts that neither LOAD DATA ...
	// REPLACE nor a plain LOAD DATA of new rows can write exactly,
	// through a temporary staging table and INSERT ... SELECT ... ON
	// DUPLICATE KEY UPDATE. Off by default: on MariaDB 10.11 it was
	// slower than the multi-row statements for groups of up to 1000
	// rows and for updates, and at best 1.25 times faster for 5000 new
	// rows (BenchmarkApplyPaths, trg-stage against trg-stmt).
	BulkStaging bool
	// MultiStatements says the target's connections take several
	// statements in one query (the driver's multiStatements=true, which
	// DSN sets and Open relies on). Load then sends the savepoint, the
	// load and the count of its rows and warnings as one query instead of
	// three. Detect leaves it false: it cannot see how db was opened.
	MultiStatements bool

	bulk bulkState
}

// Open connects to a mysql:// URL (mysql://user:pass@host:port/db?params)
// and returns a target whose dialect matches the server.
func Open(ctx context.Context, rawURL string) (*sqlsink.DB, error) {
	dsn, err := DSN(rawURL)
	if err != nil {
		return nil, err
	}
	noBulk, err := bulkLoadOff(rawURL)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", redact(rawURL), err)
	}
	d, err := Detect(ctx, db)
	if err != nil {
		db.Close()
		if (&Dialect{}).Transient(err) {
			err = &sink.UnreachableError{Err: err}
		}
		return nil, fmt.Errorf("connect %s: %w", redact(rawURL), err)
	}
	d.NoBulkLoad = noBulk
	d.MultiStatements = true
	return sqlsink.New(db, d), nil
}

func redact(raw string) string { return redactpkg.URL(raw) }

// DSN turns a mysql:// URL into a go-sql-driver DSN with txsink's session
// settings. The URL's query parameters are passed to the driver when they
// cannot change what a value becomes, and refused with an error naming
// them when they can (see params.go); txsink's own (tls*, bulk-load) are
// read by txsink.
func DSN(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("target url: %w", err)
	}
	if u.Scheme != "mysql" && u.Scheme != "mariadb" {
		return "", fmt.Errorf("target url: scheme %q is not mysql://", u.Scheme)
	}
	cfg := mysqldrv.NewConfig()
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	cfg.Net = "tcp"
	cfg.Addr = u.Host
	if u.Port() == "" {
		cfg.Addr = u.Hostname() + ":3306"
	}
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	if cfg.DBName == "" {
		return "", errors.New("target url: name the database in the path, as in mysql://user@127.0.0.1:3306/test")
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	// Client-side interpolation saves a prepare and a close round trip per
	// statement; the driver escapes for the connection's character set.
	cfg.InterpolateParams = true
	// Report rows matched, not rows changed: the fenced progress update
	// must count its row even when the position did not move.
	cfg.ClientFoundRows = true
	// Several statements in one query spare the bulk-load path two round
	// trips per load (see Dialect.MultiStatements). Every statement txsink
	// sends quotes its identifiers and has its values escaped by the
	// driver, so no value can end a statement and start another.
	cfg.MultiStatements = true
	cfg.Params = map[string]string{
		"sql_mode":  "'STRICT_ALL_TABLES,NO_ZERO_DATE,NO_ZERO_IN_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'",
		"time_zone": "'+00:00'",
	}
	q := u.Query()
	pass, err := checkParams(q)
	if err != nil {
		return "", err
	}
	for k, v := range pass {
		// Set through the driver's own fields where it has them, so
		// that FormatDSN writes each once.
		switch k {
		case "parseTime", "loc", "clientFoundRows", "multiStatements", "interpolateParams":
			// txsink's value, set above.
		default:
			cfg.Params[k] = v
		}
	}
	tlsOpts := tlsOptions{mode: q.Get("tls"), ca: q.Get("tls-ca"), cert: q.Get("tls-cert"), key: q.Get("tls-key"), serverName: q.Get("tls-server-name")}
	name, err := tlsOpts.register(u.Hostname())
	if err != nil {
		return "", err
	}
	cfg.TLSConfig = name
	return cfg.FormatDSN(), nil
}

// bulkLoadOff reads the URL parameter bulk-load: "off" (or "false")
// turns the LOAD DATA LOCAL INFILE path off, "on" (or "true", the
// default) leaves it to the server's local_infile.
func bulkLoadOff(rawURL string) (bool, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false, fmt.Errorf("target url: %w", err)
	}
	switch v := u.Query().Get("bulk-load"); strings.ToLower(v) {
	case "", "on", "true":
		return false, nil
	case "off", "false":
		return true, nil
	default:
		return false, fmt.Errorf("target url: bulk-load=%q: want on or off", v)
	}
}

// tlsOptions are the TLS parameters of a mysql:// URL:
//
//	tls=true|verify-full   verify the server's certificate and host name
//	tls=verify-ca          verify the certificate chain, not the host name
//	tls=skip-verify        encrypt without verifying (test setups only)
//	tls=preferred          TLS if the server offers it, unverified
//	tls-ca=/path/ca.pem    trust this CA (instead of the system's)
//	tls-cert, tls-key      a client certificate and its key (PEM files)
//	tls-server-name=name   the name to verify instead of the URL's host
//
// PostgreSQL URLs take libpq's own parameters instead (sslmode,
// sslrootcert, sslcert, sslkey), which pgx reads.
type tlsOptions struct {
	mode, ca, cert, key, serverName string
}

// register turns the options into a driver TLS configuration name: one of
// the driver's own ("", "true", "skip-verify", "preferred") or a
// configuration it registers from the files.
func (o tlsOptions) register(host string) (string, error) {
	name, c, err := o.build(host)
	if err != nil || c == nil {
		return name, err
	}
	if err := mysqldrv.RegisterTLSConfig(name, c); err != nil {
		return "", fmt.Errorf("target url: tls: %w", err)
	}
	return name, nil
}

// build returns the driver's own TLS configuration name (c nil), or a
// configuration to register under name.
func (o tlsOptions) build(host string) (name string, c *tls.Config, err error) {
	files := o.ca != "" || o.cert != "" || o.key != "" || o.serverName != ""
	switch o.mode {
	case "", "false":
		if !files {
			return o.mode, nil, nil
		}
		o.mode = "verify-full" // naming a CA or a certificate asks for TLS
	case "skip-verify", "preferred":
		if !files {
			return o.mode, nil, nil
		}
	case "true", "verify-full", "verify-ca":
		if !files && o.mode == "true" {
			return "true", nil, nil
		}
	default:
		return "", nil, fmt.Errorf("target url: tls=%q: want true, verify-full, verify-ca, skip-verify, preferred or false", o.mode)
	}
	c = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if o.serverName != "" {
		c.ServerName = o.serverName
	}
	if o.ca != "" {
		pem, err := os.ReadFile(o.ca)
		if err != nil {
			return "", nil, fmt.Errorf("target url: tls-ca: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return "", nil, fmt.Errorf("target url: tls-ca %s holds no PEM certificate", o.ca)
		}
	}
	if (o.cert == "") != (o.key == "") {
		return "", nil, errors.New("target url: tls-cert and tls-key go together")
	}
	if o.cert != "" {
		pair, err := tls.LoadX509KeyPair(o.cert, o.key)
		if err != nil {
			return "", nil, fmt.Errorf("target url: tls-cert/tls-key: %w", err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	switch o.mode {
	case "skip-verify", "preferred":
		c.InsecureSkipVerify = true
	case "verify-ca":
		// Verify the chain against the roots, but not the host name:
		// the standard library verifies both or neither.
		roots := c.RootCAs
		c.InsecureSkipVerify = true
		c.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			return verifyChain(raw, roots)
		}
	}
	name = fmt.Sprintf("txsink-%x", sha256.Sum256([]byte(o.mode+"\x00"+o.ca+"\x00"+o.cert+"\x00"+o.key+"\x00"+c.ServerName)))[:24]
	return name, c, nil
}

// verifyChain verifies a server's certificate chain against roots (the
// system's when nil), without checking the host name.
func verifyChain(raw [][]byte, roots *x509.CertPool) error {
	if len(raw) == 0 {
		return errors.New("tls: the server sent no certificate")
	}
	certs := make([]*x509.Certificate, len(raw))
	for i, r := range raw {
		c, err := x509.ParseCertificate(r)
		if err != nil {
			return fmt.Errorf("tls: %w", err)
		}
		certs[i] = c
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	_, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
	return err
}

// Detect reads the server's version and limits and returns the dialect
// that fits it.
func Detect(ctx context.Context, db *sql.DB) (*Dialect, error) {
	var version string
	var packet int
	if err := db.QueryRowContext(ctx, "SELECT VERSION(), @@max_allowed_packet").Scan(&version, &packet); err != nil {
		return nil, err
	}
	d := &Dialect{MaxPacket: packet}
	if strings.Contains(strings.ToLower(version), "mariadb") {
		d.MariaDB = true
	} else {
		d.RowAlias = versionAtLeast(version, 8, 0, 20)
	}
	return d, nil
}

// versionAtLeast compares a "8.0.32-log" style version.
func versionAtLeast(v string, major, minor, patch int) bool {
	var nums [3]int
	for i, p := range strings.SplitN(v, ".", 3) {
		end := 0
		for end < len(p) && p[end] >= '0' && p[end] <= '9' {
			end++
		}
		nums[i], _ = strconv.Atoi(p[:end])
	}
	want := [3]int{major, minor, patch}
	for i := range nums {
		if nums[i] != want[i] {
			return nums[i] > want[i]
		}
	}
	return true
}

// Name returns "mariadb" or "mysql".
func (d *Dialect) Name() string {
	if d.MariaDB {
		return "mariadb"
	}
	return "mysql"
}

// AddsColumnIfNotExists reports whether the server is MariaDB, which has
// ADD COLUMN IF NOT EXISTS (sqlsink.ColumnAdder); MySQL 8 has not, and
// the catalog is read instead.
func (d *Dialect) AddsColumnIfNotExists() bool { return d.MariaDB }

// Quote quotes an identifier with backticks.
func (d *Dialect) Quote(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

// WritePlaceholder writes "?".
func (d *Dialect) WritePlaceholder(b *strings.Builder, _ int) { b.WriteByte('?') }

// MaxParams is the protocol's 65,535 placeholders per statement.
func (d *Dialect) MaxParams() int { return 65535 }

// PacketLimit is the server's max_allowed_packet (see
// target.PacketLimiter).
func (d *Dialect) PacketLimit() int { return d.MaxPacket }

// MaxStatementBytes is half of max_allowed_packet, so escaping and the
// statement text always fit.
func (d *Dialect) MaxStatementBytes() int {
	if d.MaxPacket <= 0 {
		return 4 << 20
	}
	return d.MaxPacket / 2
}

// Upsert writes, for MariaDB:
//
//	INSERT INTO `t` (`id`,`v`) VALUES (?,?),(?,?) ON DUPLICATE KEY UPDATE `v`=VALUES(`v`)
//
// and for MySQL 8.0.20+:
//
//	INSERT INTO `t` (`id`,`v`) VALUES (?,?),(?,?) AS `new` ON DUPLICATE KEY UPDATE `v`=`new`.`v`
//
// Key columns are set too when their equal values can be spelled
// differently (sqlsink.Assigns), so the row takes the new spelling. When
// no column is to be set, the update sets the first column to itself: the
// row exists and equals the image already.
func (d *Dialect) Upsert(b *strings.Builder, t *schema.Table, cols []string, rows int) {
	d.Insert(b, t, cols, rows)
	if d.RowAlias {
		b.WriteString(" AS `new`")
	}
	b.WriteString(" ON DUPLICATE KEY UPDATE ")
	n := 0
	for _, c := range cols {
		if !sqlsink.Assigns(t, c) {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		d.assign(b, c)
	}
	if n == 0 {
		d.assign(b, cols[0])
	}
}

func (d *Dialect) assign(b *strings.Builder, c string) {
	q := d.Quote(c)
	b.WriteString(q)
	b.WriteByte('=')
	if d.RowAlias {
		b.WriteString("`new`.")
		b.WriteString(q)
	} else {
		b.WriteString("VALUES(")
		b.WriteString(q)
		b.WriteByte(')')
	}
}

var (
	_ sqlsink.Guarder        = (*Dialect)(nil)
	_ sqlsink.RefusalCounter = (*Dialect)(nil)
)

// GuardedUpsert writes Upsert's statement with the version guard, for
// MariaDB:
//
//	INSERT INTO `t` (`id`,`a`,`v`) VALUES (?,?,?) ON DUPLICATE KEY UPDATE
//	`a`=IF(`v` IS NULL OR VALUES(`v`) >= `v`, VALUES(`a`), `a`),
//	`v`=IF(`v` IS NULL OR VALUES(`v`) >= `v`, VALUES(`v`), IF((@txsink_refused := @txsink_refused + 1) IS NULL, `v`, `v`))
//
// (MySQL 8.0.20+: `new`.`a` for VALUES(`a`)). The server assigns left to
// right, each assignment seeing the ones before it, so the version
// column comes last: every other column compares with the stored
// version. A refused row adds one to @txsink_refused (see
// sqlsink.RefusalCounter): the affected rows cannot tell it from a row
// set to the values it had.
func (d *Dialect) GuardedUpsert(b *strings.Builder, t *schema.Table, cols []string, rows int, ver string) {
	d.Insert(b, t, cols, rows)
	if d.RowAlias {
		b.WriteString(" AS `new`")
	}
	b.WriteString(" ON DUPLICATE KEY UPDATE ")
	qv := d.Quote(ver)
	cond := qv + " IS NULL OR " + d.proposed(ver) + " >= " + qv
	var verName string
	for _, c := range cols {
		if strings.EqualFold(c, ver) {
			verName = c
			continue
		}
		if !sqlsink.Assigns(t, c) {
			continue
		}
		q := d.Quote(c)
		b.WriteString(q + "=IF(" + cond + ", " + d.proposed(c) + ", " + q + "),")
	}
	b.WriteString(qv + "=IF(" + cond + ", " + d.proposed(verName) + ", IF((@txsink_refused := @txsink_refused + 1) IS NULL, " + qv + ", " + qv + "))")
}

// proposed spells the value an upsert proposes for column c.
func (d *Dialect) proposed(c string) string {
	if d.RowAlias {
		return "`new`." + d.Quote(c)
	}
	return "VALUES(" + d.Quote(c) + ")"
}

// ResetRefused zeroes the count of rows guarded upserts refused
// (sqlsink.RefusalCounter).
func (d *Dialect) ResetRefused(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, "SET @txsink_refused = 0")
	return err
}

// ReadRefused reads the count of rows guarded upserts refused since
// ResetRefused.
func (d *Dialect) ReadRefused(ctx context.Context, tx *sql.Tx) (int, error) {
	var n int
	err := tx.QueryRowContext(ctx, "SELECT @txsink_refused").Scan(&n)
	return n, err
}

// Insert writes INSERT INTO `t` (`a`,`b`) VALUES (?,?),(?,?).
func (d *Dialect) Insert(b *strings.Builder, t *schema.Table, cols []string, rows int) {
	sqlsink.WriteInsert(b, d, t, cols, rows)
}

// Delete writes DELETE FROM `t` WHERE `id` IN (?,?), or
// WHERE (`a`,`b`) IN ((?,?),(?,?)) for a composite key.
func (d *Dialect) Delete(b *strings.Builder, t *schema.Table, rows int) {
	b.WriteString("DELETE FROM ")
	b.WriteString(sqlsink.QuotedTable(d, t))
	b.WriteString(" WHERE ")
	sqlsink.WriteKeyIn(b, d, t.PrimaryKey, rows)
}

// ProgressSchema creates txsink_progress. Partition names compare exactly
// (utf8mb4_bin): file paths are case-sensitive.
func (d *Dialect) ProgressSchema() []string {
	return []string{"CREATE TABLE IF NOT EXISTS `" + sqlsink.ProgressTable + "` (" +
		"`pipeline` VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL," +
		"`source_partition` VARCHAR(512) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL," +
		"`position` BIGINT NOT NULL," +
		"`seq` BIGINT NOT NULL," +
		"`epoch` BIGINT NOT NULL DEFAULT 0," +
		"`updated_at` TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6)," +
		"`position_mark` TEXT NULL," +
		"PRIMARY KEY (`pipeline`,`source_partition`)) ENGINE=InnoDB"}
}

// DeadLetterSchema creates txsink_dead_letters. The identifiers a source
// names (partition, transaction id) and the reason are LONGTEXT in
// utf8mb4, whatever the database's default character set: none of them
// is indexed, and a dead letter that cannot be stored fails every run
// again.
func (d *Dialect) DeadLetterSchema() []string {
	return []string{"CREATE TABLE IF NOT EXISTS `" + sqlsink.DeadLetterTable + "` (" +
		"`id` BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY," +
		"`pipeline` VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL," +
		"`source_partition` " + deadLetterText + "," +
		"`position` BIGINT NOT NULL," +
		"`seq` BIGINT NOT NULL," +
		"`txn_id` " + deadLetterText + "," +
		"`raw` LONGBLOB NOT NULL," +
		"`reason` " + deadLetterText + "," +
		"`created_at` TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)," +
		"KEY (`pipeline`, `id`)) ENGINE=InnoDB"}
}

// deadLetterText is the type of the dead-letter table's text columns.
const deadLetterText = "LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL"

// MigrateDeadLetters widens the text columns of a dead-letter table an
// older txsink created (source_partition and txn_id VARCHAR(512), reason
// TEXT) to LONGTEXT, so that any transaction id fits. It changes nothing
// in a table that has the current shape; instances that start together
// may both run the ALTER, which gives the same table either way.
func (d *Dialect) MigrateDeadLetters(ctx context.Context, db *sql.DB) error {
	var narrow int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?"+
		" AND COLUMN_NAME IN ('source_partition','txn_id','reason') AND DATA_TYPE <> 'longtext'", sqlsink.DeadLetterTable).Scan(&narrow); err != nil {
		return err
	}
	if narrow == 0 {
		return nil
	}
	_, err := db.ExecContext(ctx, "ALTER TABLE `"+sqlsink.DeadLetterTable+"` MODIFY `source_partition` "+deadLetterText+
		", MODIFY `txn_id` "+deadLetterText+", MODIFY `reason` "+deadLetterText)
	return err
}

// ProgressClaim writes the claim of one partition: a new row at epoch 1,
// or the existing row's epoch plus one.
func (d *Dialect) ProgressClaim(b *strings.Builder) {
	b.WriteString("INSERT INTO `" + sqlsink.ProgressTable + "` (`pipeline`,`source_partition`,`position`,`seq`,`epoch`) VALUES (?,?,0,0,1) ON DUPLICATE KEY UPDATE `epoch`=`epoch`+1")
}

// ProgressAdvance writes the fenced update of one partition's position.
// The session reports found rows (clientFoundRows), so an update that
// changes nothing still counts its row.
func (d *Dialect) ProgressAdvance(b *strings.Builder) {
	b.WriteString("UPDATE `" + sqlsink.ProgressTable + "` SET `position`=?,`seq`=?,`position_mark`=? WHERE `pipeline`=? AND `source_partition`=? AND `epoch`=?")
}

// Bind passes converted values through: the driver formats time.Time in
// UTC (the session's zone) with microseconds, and strings, integers and
// byte slices as they are.
func (d *Dialect) Bind(col *schema.Column, v any) any {
	if t, ok := v.(time.Time); ok {
		if t.IsZero() {
			// The driver sends Go's zero time, 0001-01-01 00:00:00, as
			// '0000-00-00', which strict mode refuses: a real first day of
			// year 1 would be refused. Send it as text.
			if col != nil && col.Class == schema.Date {
				return "0001-01-01"
			}
			return "0001-01-01 00:00:00"
		}
		return t.UTC()
	}
	return v
}

// MySQL error numbers worth a retry.
const (
	errLockWaitTimeout = 1205
	errDeadlock        = 1213
	errServerGone      = 2006
	errServerLost      = 2013
	errConnKilled      = 1927 // MariaDB: connection was killed
	errQueryKilled     = 1317
	errServerShutdown  = 1053
	errTooManyConns    = 1040
)

// Transient reports deadlocks, lock-wait timeouts, killed and lost
// connections.
func (d *Dialect) Transient(err error) bool {
	var me *mysqldrv.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case errLockWaitTimeout, errDeadlock, errServerGone, errServerLost, errConnKilled, errQueryKilled, errServerShutdown, errTooManyConns:
			return true
		}
		return false
	}
	var ne net.Error
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysqldrv.ErrInvalidConn) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.As(err, &ne) ||
		errors.Is(err, sql.ErrConnDone) || errors.Is(err, sql.ErrTxDone)
}

// MySQL/MariaDB error numbers of the server's own state, which no row
// causes.
const (
	errCantCreateFile   = 1004
	errErrorOnWrite     = 1026
	errOutOfMemory      = 1037
	errOutOfSortMemory  = 1038
	errOutOfResources   = 1041
	errDiskFull         = 1021
	errRecordFileFull   = 1114 // the table is full: a disk or a tablespace limit
	errCantCreateThread = 1135
	errTableAccessDeny  = 1142
	errColumnAccessDeny = 1143
	errSpecificAccess   = 1227
	errReadOnlyOption   = 1290 // --read-only and similar options
	errReadOnlyTxn      = 1792
)

// ServerCondition reports a full disk or table file, exhausted memory or
// threads, failed writes, a read-only server and missing privileges.
func (d *Dialect) ServerCondition(err error) bool {
	var me *mysqldrv.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	switch me.Number {
	case errCantCreateFile, errErrorOnWrite, errOutOfMemory, errOutOfSortMemory, errOutOfResources, errDiskFull,
		errRecordFileFull, errCantCreateThread, errTableAccessDeny, errColumnAccessDeny, errSpecificAccess,
		errReadOnlyOption, errReadOnlyTxn:
		return true
	}
	return false
}

// MySQL/MariaDB error numbers that refuse a row for its own values.
const (
	errBadNull                     = 1048 // NULL into a NOT NULL column
	errWarnNullToNotNull           = 1263
	errWarnDataOutOfRange          = 1264
	errWarnDataTruncated           = 1265
	errTruncatedWrongValue         = 1292 // an incorrect date-time or number
	errInvalidCharacterString      = 1300
	errNoDefaultForField           = 1364 // a NOT NULL column without a default the row does not set
	errTruncatedWrongValueForField = 1366 // an incorrect integer, decimal or string value
	errIllegalValueForType         = 1367
	errDataTooLong                 = 1406
	errWrongValueForType           = 1411
	errCantCreateGeometry          = 1416
	errDataOutOfRange              = 1690
	errInvalidJSONText             = 3140 // MySQL's JSON type
	errCheckViolated               = 3819 // MySQL 8
	errConstraintFailed            = 4025 // MariaDB: a CHECK constraint, also its JSON_VALID one
)

// RowFault reports a value its column cannot hold, a NOT NULL column left
// without a value and a failed CHECK constraint, by error number.
func (d *Dialect) RowFault(err error) bool {
	var me *mysqldrv.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	switch me.Number {
	case errBadNull, errWarnNullToNotNull, errWarnDataOutOfRange, errWarnDataTruncated, errTruncatedWrongValue,
		errInvalidCharacterString, errNoDefaultForField, errTruncatedWrongValueForField, errIllegalValueForType,
		errDataTooLong, errWrongValueForType, errCantCreateGeometry, errDataOutOfRange, errInvalidJSONText,
		errCheckViolated, errConstraintFailed:
		return true
	}
	return false
}
