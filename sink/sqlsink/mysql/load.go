package mysql

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	mysqldrv "github.com/go-sql-driver/mysql"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink/sqlsink"
)

// Bulk loading: the dialect is a target.Loader. A group of at least
// BulkMinRows rows is streamed to the server with
//
//	LOAD DATA LOCAL INFILE 'Reader::txsink-load-N' [REPLACE] INTO TABLE `t` CHARACTER SET utf8mb4 ...
//
// on the unit's transaction, through the driver's reader handlers (no file
// is written). What it leaves in the table is what the statement path
// would have left, or the group is declined and the statement path writes
// it:
//
//   - Inserts (append-only tables) are a plain LOAD DATA.
//   - Upserts are LOAD DATA ... REPLACE where REPLACE provably does what
//     INSERT ... ON DUPLICATE KEY UPDATE does. REPLACE deletes the old row
//     and inserts the new one, so it is used only when the group writes
//     every column the table has (none is reset to its default), the
//     primary key is the table's only unique key (no other row is
//     deleted), no trigger is defined on the table (no DELETE trigger
//     fires), no foreign key references it (no ON DELETE action runs), it
//     is not system-versioned, and every key column compares equal only
//     when its stored values are identical (integers, decimals, date-times,
//     binary strings, NO PAD binary collations: the replaced row keeps the
//     very key the statement path would keep).
//   - Other upserts are tried as a plain LOAD DATA, which the server
//     accepts without a warning only when every row is new: no row's key,
//     primary or unique, exists. Then the upsert, too, would have inserted
//     each row and updated none, so the result is the same; otherwise the
//     load is rolled back (see below) and the group declined. After a
//     miss, a table's next groups skip the attempt (1, 2, 4 ... up to 64
//     of them), so an update-heavy table wastes little. Tables with
//     triggers are not tried: a trigger may write where a savepoint does
//     not reach (a MyISAM table), and would then have fired twice.
//   - Dialect.BulkStaging adds a last resort for upserts, LOAD DATA into a
//     temporary table and INSERT ... SELECT ... ON DUPLICATE KEY UPDATE;
//     measured, it is mostly slower than the multi-row statements, so it
//     is off (see the field).
//   - With LOCAL the server turns much of what strict mode refuses (a value
//     too long or out of range, NULL into NOT NULL, a duplicate key, a
//     failed CHECK or foreign key) into warnings and goes on, and REPLACE
//     fails some of it outright. So every load runs after a SAVEPOINT;
//     when the server reports an error, any warning or note, or a row
//     count other than the rows sent, the load is rolled back to the
//     savepoint and the group declined, and the statement path writes it
//     in strict mode: a bad value fails exactly as it does without the
//     loader, and Apply's diagnosis names the row. A value is never cut,
//     rounded or dropped on this path. Only a transient error (deadlock,
//     lost connection) is returned: the transaction is lost anyway.
//   - Only InnoDB tables are loaded, so the savepoint and the unit's
//     rollback undo a load; and not on a Galera node that splits loads
//     into separate commits (wsrep_load_data_splitting=ON).
//   - A server that refuses LOCAL INFILE (local_infile=OFF, MySQL 8's
//     default) is detected once, from @@local_infile or from the refusal,
//     and from then on every group is declined; nothing fails. To use the
//     path, enable it on the server: SET PERSIST local_infile=ON (MySQL
//     8), or local_infile=ON in the server's configuration (MariaDB's
//     default is ON). The client side needs nothing: the driver always
//     offers the capability and the reader handlers need no file
//     allow-list. The URL parameter bulk-load=off turns the path off.
//
// Text goes as utf8mb4, the connection's character set, so the server
// converts it to each column's character set as it does for statements
// (a character the column cannot hold is a warning, hence a decline);
// binary columns receive their bytes unchanged.

// loadPacket is the packet the driver streams a LOAD DATA LOCAL file in
// (16 KiB and its header). A server whose max_allowed_packet is smaller
// drops the connection at the first one, so such a server is written with
// statements only.
const loadPacket = 16<<10 + 4

// DefaultBulkMinRows is the fewest rows of a group the bulk-load path takes
// when Dialect.BulkMinRows is 0. Below it the extra round trips (savepoint,
// warning count) cost about what LOAD DATA saves over one multi-row
// statement: on MariaDB 10.11, whole units of 64 rows were no faster by
// LOAD DATA, of 128 to 256 rows about as fast to 1.3 times faster, of 512
// and more 1.2 to 2.4 times faster (BenchmarkApplyPaths).
const DefaultBulkMinRows = 200

var _ sqlsink.Loader = (*Dialect)(nil)

// bulkState is the loader's memory: whether the server takes LOCAL
// INFILE, each table's shape, read once, and when to try a table's
// upserts as new rows next. A Dialect is shared by every connection of its
// target, so it is guarded.
type bulkState struct {
	mu      sync.Mutex
	checked bool   // @@local_infile was read
	off     string // why LOAD DATA LOCAL cannot be used on this server; "" while it can
	shapes  map[string]*tableShape
	tries   map[string]*backoff // by table, for pathNew
	counts  [numPaths]int64
	// oneQueryOff is set when a one-query load found its savepoint
	// missing: the connections take one statement per query after all (a
	// proxy in between, a DSN without multiStatements), so loads go as
	// three statements from then on.
	oneQueryOff atomic.Bool
}

// readerSeq numbers the reader handlers: their names are global to the
// driver, shared by every Dialect of the process.
var readerSeq atomic.Uint64

// backoff spaces out the attempts to load a table's upserts as new rows
// after attempts that found existing ones.
type backoff struct {
	skip int // groups to pass over before the next attempt
	wait int // the skip after the next miss
}

// maxSkip bounds the groups passed over after repeated misses: an
// update-heavy table still loses at most one load in this many.
const maxSkip = 64

// A loadPath is how Load wrote (or declined) a group.
type loadPath int

const (
	pathDeclined   loadPath = iota // left to the statements
	pathInsert                     // LOAD DATA into the table
	pathReplace                    // LOAD DATA ... REPLACE into the table
	pathNew                        // an upsert loaded as LOAD DATA into the table: every row was new
	pathStage                      // LOAD DATA into a temporary table, then INSERT ... SELECT ... ON DUPLICATE KEY UPDATE
	pathRolledBack                 // loaded, then rolled back to the savepoint (warnings, refusal, error)
	numPaths
)

var pathNames = [numPaths]string{"declined", "insert", "replace", "new", "stage", "rolled back"}

func (p loadPath) String() string { return pathNames[p] }

// tableShape is what decides how a table may be bulk loaded.
type tableShape struct {
	// why says why the table takes no LOAD DATA at all; "" when it does.
	why string
	// notReplace says why REPLACE is not equivalent to the upsert even
	// for a group writing every column; "" when it is.
	notReplace string
	// notNew says why upserts are not tried as new rows; "" when they are.
	notNew string
	// columns are the table's writable (not generated) columns.
	columns []string
	// noStage says why the staging path is unavailable; "" when it is.
	noStage string
}

// covers reports whether cols include every writable column of the table.
func (s *tableShape) covers(cols []*schema.Column) bool {
	for _, name := range s.columns {
		if !hasColumn(cols, name) {
			return false
		}
	}
	return true
}

// bulkMinRows is the threshold in force: BulkMinRows or the default.
func (d *Dialect) bulkMinRows() int {
	if d.BulkMinRows > 0 {
		return d.BulkMinRows
	}
	return DefaultBulkMinRows
}

// count records that a group took path p (LoadCounts reads it in tests).
func (d *Dialect) count(p loadPath) {
	d.bulk.mu.Lock()
	d.bulk.counts[p]++
	d.bulk.mu.Unlock()
}

// Load writes req's rows with LOAD DATA LOCAL INFILE inside tx when that
// leaves exactly what the statement path would, and declines (false, nil,
// nothing written) otherwise; see the comment at the top of load.go for
// the rules. An error is returned only when the transaction itself is in
// doubt (a deadlock, a lost connection, a cancelled context); Apply then
// rolls back and retries or reports the unit as it would for a failed
// statement.
func (d *Dialect) Load(ctx context.Context, conn *sql.Conn, tx *sql.Tx, req *sqlsink.LoadRequest) (bool, error) {
	if d.NoBulkLoad || d.MaxPacket > 0 && d.MaxPacket < loadPacket || len(req.Rows) < d.bulkMinRows() || !loadableColumns(req.Columns) {
		return false, nil
	}
	done, err := d.load(ctx, tx, req)
	if err == nil && !done {
		d.count(pathDeclined)
	}
	return done, err
}

// load chooses the path for req and loads it (see load.go's top comment).
func (d *Dialect) load(ctx context.Context, tx *sql.Tx, req *sqlsink.LoadRequest) (bool, error) {
	if ok, err := d.localInfile(ctx, tx); !ok || err != nil {
		return false, err
	}
	shape, err := d.shapeOf(ctx, tx, req.Table)
	if err != nil || shape.why != "" {
		return false, err
	}
	if !req.Upsert {
		return d.try(ctx, tx, req, pathInsert)
	}
	if shape.notReplace == "" && shape.covers(req.Columns) {
		return d.try(ctx, tx, req, pathReplace)
	}
	if shape.notNew == "" && d.newDue(req.Table) {
		if done, err := d.try(ctx, tx, req, pathNew); err != nil || done {
			return done, err
		}
	}
	if d.BulkStaging && shape.noStage == "" && !hasColumn(req.Columns, stageSeq) {
		return d.try(ctx, tx, req, pathStage)
	}
	return false, nil
}

// try loads req by path and counts the outcome; for pathNew it also
// decides when the table is tried next.
func (d *Dialect) try(ctx context.Context, tx *sql.Tx, req *sqlsink.LoadRequest, path loadPath) (bool, error) {
	if ok, err := d.localInfile(ctx, tx); !ok || err != nil {
		// An earlier attempt found the server refusing.
		return false, err
	}
	done, err := d.loadSaved(ctx, tx, req, path)
	if err != nil {
		return false, err
	}
	if path == pathNew {
		d.newResult(req.Table, done)
	}
	if done {
		d.count(path)
	} else {
		d.count(pathRolledBack)
	}
	return done, nil
}

// newDue reports whether t's upserts are to be tried as new rows now.
func (d *Dialect) newDue(t *schema.Table) bool {
	d.bulk.mu.Lock()
	defer d.bulk.mu.Unlock()
	b := d.bulk.tries[t.String()]
	if b == nil || b.skip == 0 {
		return true
	}
	b.skip--
	return false
}

// newResult records whether an attempt to load t's upserts as new rows
// took them.
func (d *Dialect) newResult(t *schema.Table, took bool) {
	d.bulk.mu.Lock()
	defer d.bulk.mu.Unlock()
	if d.bulk.tries == nil {
		d.bulk.tries = map[string]*backoff{}
	}
	b := d.bulk.tries[t.String()]
	if b == nil {
		b = &backoff{}
		d.bulk.tries[t.String()] = b
	}
	if took {
		*b = backoff{}
		return
	}
	b.wait = min(max(1, 2*b.wait), maxSkip)
	b.skip = b.wait
}

// loadableColumns reports whether every column takes LOAD DATA's text as
// it takes a bound value. Columns of types txsink does not know (BIT,
// spatial types, ...) read text differently: a BIT column would store the
// digits' characters, not the number.
func loadableColumns(cols []*schema.Column) bool {
	for _, c := range cols {
		if c.Class == schema.Unknown || c.Generated {
			return false
		}
	}
	return true
}

// hasColumn reports whether cols hold a column named name (MySQL column
// names compare case-insensitively).
func hasColumn(cols []*schema.Column, name string) bool {
	for _, c := range cols {
		if strings.EqualFold(c.Name, name) {
			return true
		}
	}
	return false
}

// localInfile reports whether the server takes LOAD DATA LOCAL, reading
// @@local_infile the first time.
func (d *Dialect) localInfile(ctx context.Context, q sqlsink.Querier) (bool, error) {
	d.bulk.mu.Lock()
	checked, off := d.bulk.checked, d.bulk.off
	d.bulk.mu.Unlock()
	if checked {
		return off == "", nil
	}
	var on sql.NullInt64
	if err := q.QueryRowContext(ctx, "SELECT @@local_infile").Scan(&on); err != nil {
		if d.Transient(err) || ctx.Err() != nil {
			return false, fmt.Errorf("bulk load: read @@local_infile: %w", err)
		}
		// A server without the variable says no by refusing the load.
		on = sql.NullInt64{Int64: 1, Valid: true}
	}
	// A Galera node with wsrep_load_data_splitting commits a LOAD DATA
	// every 10,000 rows, inside the unit's transaction or not. Servers
	// without the variable (MySQL) do not split.
	var split sql.NullInt64
	if err := q.QueryRowContext(ctx, "SELECT @@wsrep_on AND @@wsrep_load_data_splitting").Scan(&split); err != nil && (d.Transient(err) || ctx.Err() != nil) {
		return false, fmt.Errorf("bulk load: read @@wsrep_load_data_splitting: %w", err)
	}
	d.bulk.mu.Lock()
	defer d.bulk.mu.Unlock()
	d.bulk.checked = true
	switch {
	case d.bulk.off != "":
	case on.Valid && on.Int64 == 0:
		d.bulk.off = "the server has local_infile=OFF"
	case split.Valid && split.Int64 != 0:
		d.bulk.off = "the server has wsrep_load_data_splitting=ON, which would commit a load in parts"
	}
	return d.bulk.off == "", nil
}

// disable turns the bulk path off for good.
func (d *Dialect) disable(why string) {
	d.bulk.mu.Lock()
	defer d.bulk.mu.Unlock()
	d.bulk.checked = true
	if d.bulk.off == "" {
		d.bulk.off = why
	}
}

// MySQL and MariaDB error numbers of a refused LOAD DATA LOCAL.
const (
	errNotAllowedCommand   = 1148 // MySQL 5.7, older MariaDB: local_infile=OFF
	errClientLocalFilesOff = 3948 // MySQL 8.0: local_infile=OFF on either side
	errInfileCapabilityOff = 4166 // MariaDB 10.5+: local_infile=OFF on either side
)

// refusesLocal reports whether err is the server refusing LOCAL INFILE.
func refusesLocal(err error) bool {
	var me *mysqldrv.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	switch me.Number {
	case errNotAllowedCommand, errClientLocalFilesOff, errInfileCapabilityOff:
		return true
	}
	return false
}

const savepoint = "txsink_load"

// errNoSavepoint is the server's ER_SP_DOES_NOT_EXIST: ROLLBACK TO
// SAVEPOINT found none, so the query that was to set it stopped before it
// (and before the load).
const errNoSavepoint = 1305

// savepointSeq numbers the savepoints of loadOneTrip. Each has a name of
// its own: were the query's SAVEPOINT to fail, rolling back to a same-named
// savepoint of an earlier load in the transaction would undo that load.
var savepointSeq atomic.Uint64

// loadSaved runs the load of req by path after a savepoint, and rolls back
// to it when the load did not write exactly req's rows (see load.go's top
// comment). It reports whether the rows are written.
func (d *Dialect) loadSaved(ctx context.Context, tx *sql.Tx, req *sqlsink.LoadRequest, path loadPath) (bool, error) {
	var done bool
	var err error
	sp := savepoint
	if d.MultiStatements && path != pathStage && !d.bulk.oneQueryOff.Load() {
		sp = fmt.Sprintf("%s_%d", savepoint, savepointSeq.Add(1))
		done, err = d.loadOneTrip(ctx, tx, req, sp, path == pathReplace)
	} else {
		if _, err := tx.ExecContext(ctx, "SAVEPOINT "+savepoint); err != nil {
			if d.Transient(err) || ctx.Err() != nil {
				return false, fmt.Errorf("bulk load into %s: savepoint: %w", req.Table, err)
			}
			return false, nil
		}
		if path == pathStage {
			done, err = d.loadStaged(ctx, tx, req)
		} else {
			done, err = d.loadDirect(ctx, tx, req, path == pathReplace)
		}
	}
	if done && err == nil {
		return true, nil
	}
	if err != nil && (d.Transient(err) || ctx.Err() != nil) {
		// The transaction is lost or abandoned: Apply rolls it back and
		// retries the unit (or stops) as for a failed statement.
		return false, fmt.Errorf("bulk load into %s: %w", req.Table, err)
	}
	if _, rerr := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+sp); rerr != nil {
		var me *mysqldrv.MySQLError
		if !(err != nil && sp != savepoint && errors.As(rerr, &me) && me.Number == errNoSavepoint) {
			return false, fmt.Errorf("bulk load into %s: roll back to savepoint %s: %w", req.Table, sp, rerr)
		}
		// The query of loadOneTrip failed at its SAVEPOINT, so nothing
		// was loaded; most likely the server took the query as one
		// statement (a syntax error). Load the group as three statements,
		// and every later one.
		d.bulk.oneQueryOff.Store(true)
		return d.loadSaved(ctx, tx, req, path)
	}
	if refusesLocal(err) {
		d.disable("the server refused LOAD DATA LOCAL INFILE: " + err.Error())
	}
	return false, nil
}

// loadDirect loads req's rows into the table itself. It reports false,
// leaving the caller to roll back, when the server warned or counted rows
// other than req's.
func (d *Dialect) loadDirect(ctx context.Context, tx *sql.Tx, req *sqlsink.LoadRequest, replace bool) (bool, error) {
	return d.loadChecked(ctx, tx, sqlsink.QuotedTable(d, req.Table), req, replace)
}

// loadChecked loads req's rows into table as a statement of its own, then
// asks for its warnings. It reports true when every row went in (see
// loadedAll) and the server warned of nothing.
func (d *Dialect) loadChecked(ctx context.Context, tx *sql.Tx, table string, req *sqlsink.LoadRequest, replace bool) (bool, error) {
	stmt, rr, done := d.loadStatement(table, req.Columns, req.Rows, replace)
	defer done()
	res, err := tx.ExecContext(ctx, stmt)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if err != nil || rr.err != nil || !loadedAll(n, len(req.Rows), replace) {
		return false, err
	}
	return d.noWarnings(ctx, tx)
}

// loadOneTrip does what SAVEPOINT sp, loadDirect and noWarnings do, in one
// query of three statements. The two round trips it saves per load were
// about a twentieth of an insert-only run's time into MariaDB on the same
// host (txsink bench), where each waits for both processes to be
// scheduled. The caller rolls back to sp when it reports false; when the
// query fails, the server ran none of the statements after the failed
// one.
func (d *Dialect) loadOneTrip(ctx context.Context, tx *sql.Tx, req *sqlsink.LoadRequest, sp string, replace bool) (bool, error) {
	load, rr, done := d.loadStatement(sqlsink.QuotedTable(d, req.Table), req.Columns, req.Rows, replace)
	defer done()
	rows, err := tx.QueryContext(ctx, "SAVEPOINT "+sp+";"+load+";SELECT ROW_COUNT(), @@warning_count")
	if err != nil {
		return false, err
	}
	// The results come in the statements' order: two without rows, then
	// the count and the warnings of the load.
	counted := false
	var n, warnings int64
	for {
		for rows.Next() {
			if err := rows.Scan(&n, &warnings); err != nil {
				rows.Close()
				return false, fmt.Errorf("count rows and warnings: %w", err)
			}
			counted = true
		}
		if !rows.NextResultSet() {
			break
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return false, err
	}
	if !counted {
		return false, errors.New("count rows and warnings: the server sent no count")
	}
	return rr.err == nil && warnings == 0 && loadedAll(n, len(req.Rows), replace), nil
}

// loadedAll reports whether a load of sent rows that the server reports
// affected n rows wrote each of them: a replaced row counts twice, its
// delete and its insert.
func loadedAll(n int64, sent int, replace bool) bool {
	rows := int64(sent)
	if replace {
		return n >= rows && n <= 2*rows
	}
	return n == rows
}

// loadStatement registers a reader handler streaming rows and returns the
// LOAD DATA LOCAL INFILE statement that reads it into table, the reader
// (whose err says, after the statement, whether a row could not be sent),
// and the function that deregisters the handler once the statement has
// run.
func (d *Dialect) loadStatement(table string, cols []*schema.Column, rows [][]any, replace bool) (string, *rowReader, func()) {
	name := fmt.Sprintf("txsink-load-%d", readerSeq.Add(1))
	rr := newRowReader(rows)
	mysqldrv.RegisterReaderHandler(name, func() io.Reader { return rr })
	var b strings.Builder
	b.WriteString("LOAD DATA LOCAL INFILE 'Reader::")
	b.WriteString(name)
	b.WriteString("' ")
	if replace {
		b.WriteString("REPLACE ")
	}
	b.WriteString("INTO TABLE ")
	b.WriteString(table)
	// Hex literals: the statement reads the same whatever the session's
	// NO_BACKSLASH_ESCAPES says.
	b.WriteString(" CHARACTER SET utf8mb4 FIELDS TERMINATED BY X'09' ENCLOSED BY '' ESCAPED BY X'5C' LINES TERMINATED BY X'0A' STARTING BY '' (")
	d.writeColumns(&b, "", cols)
	b.WriteByte(')')
	return b.String(), rr, func() { mysqldrv.DeregisterReaderHandler(name) }
}

// noWarnings reports whether the last statement left no warning (nor
// note: a rounded DECIMAL is only a note).
func (d *Dialect) noWarnings(ctx context.Context, tx *sql.Tx) (bool, error) {
	var n int64
	if err := tx.QueryRowContext(ctx, "SHOW COUNT(*) WARNINGS").Scan(&n); err != nil {
		return false, fmt.Errorf("count warnings: %w", err)
	}
	return n == 0, nil
}

// stageSeq is the staging table's own column: the order rows were loaded
// in, which INSERT ... SELECT keeps, as a multi-row INSERT keeps its own.
const stageSeq = "txsink_stage_seq"

// loadStaged loads req's rows into a temporary table of this connection
// (created on first use, emptied first each time) and upserts them from
// there with INSERT ... SELECT ... ON DUPLICATE KEY UPDATE: the statement
// path's semantics, triggers and all, in strict mode. The staging table
// holds only req's columns, with their types and NOT NULL, so a value the
// column cannot hold already warns in the load.
func (d *Dialect) loadStaged(ctx context.Context, tx *sql.Tx, req *sqlsink.LoadRequest) (bool, error) {
	tbl := sqlsink.QuotedTable(d, req.Table)
	var cols strings.Builder
	d.writeColumns(&cols, "", req.Columns)
	stage := d.stageName(req)
	create := "CREATE TEMPORARY TABLE IF NOT EXISTS " + stage + " (" + d.Quote(stageSeq) + " BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY) ENGINE=InnoDB AS SELECT " +
		cols.String() + " FROM " + tbl + " WHERE 1=0"
	if _, err := tx.ExecContext(ctx, create); err != nil {
		if !d.Transient(err) {
			d.noStage(req.Table, err)
		}
		return false, err
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM "+stage); err != nil {
		return false, err
	}
	if ok, err := d.loadChecked(ctx, tx, stage, req, false); !ok || err != nil {
		return false, err
	}
	var ins strings.Builder
	ins.WriteString("INSERT INTO ")
	ins.WriteString(tbl)
	ins.WriteString(" (")
	ins.WriteString(cols.String())
	ins.WriteString(") SELECT ")
	d.writeColumns(&ins, "`s`.", req.Columns)
	ins.WriteString(" FROM ")
	ins.WriteString(stage)
	ins.WriteString(" AS `s` ORDER BY `s`.")
	ins.WriteString(d.Quote(stageSeq))
	ins.WriteString(" ON DUPLICATE KEY UPDATE ")
	set := 0
	for _, c := range req.Columns {
		if !sqlsink.Assigns(req.Table, c.Name) {
			continue
		}
		if set > 0 {
			ins.WriteByte(',')
		}
		set++
		d.assignFrom(&ins, c.Name)
	}
	if set == 0 {
		// As Upsert does: the row exists and equals the image already.
		d.assignFrom(&ins, req.Columns[0].Name)
	}
	if _, err := tx.ExecContext(ctx, ins.String()); err != nil {
		return false, err
	}
	return true, nil
}

// writeColumns writes the quoted names of cols, each after prefix,
// separated by commas.
func (d *Dialect) writeColumns(b *strings.Builder, prefix string, cols []*schema.Column) {
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(prefix)
		b.WriteString(d.Quote(c.Name))
	}
}

// assignFrom writes c=`s`.c: the staged row's value.
func (d *Dialect) assignFrom(b *strings.Builder, c string) {
	q := d.Quote(c)
	b.WriteString(q)
	b.WriteString("=`s`.")
	b.WriteString(q)
}

// stageName names the staging table of req's table and columns, in the
// table's database: a temporary table is the connection's own and hides
// no other connection's table.
func (d *Dialect) stageName(req *sqlsink.LoadRequest) string {
	h := sha256.New()
	h.Write([]byte(req.Table.String()))
	for _, c := range req.Columns {
		h.Write([]byte{0})
		h.Write([]byte(c.Name))
	}
	name := "txsink_stage_" + hex.EncodeToString(h.Sum(nil))[:20]
	if req.Table.Namespace == "" {
		return d.Quote(name)
	}
	return d.Quote(req.Table.Namespace) + "." + d.Quote(name)
}

// noStage records that the staging path does not work for t (the user may
// not create temporary tables, the server refuses them in a transaction).
func (d *Dialect) noStage(t *schema.Table, err error) {
	d.bulk.mu.Lock()
	defer d.bulk.mu.Unlock()
	if s := d.bulk.shapes[t.String()]; s != nil {
		// Shapes are read without the lock: replace, never modify.
		c := *s
		c.noStage = err.Error()
		d.bulk.shapes[t.String()] = &c
	}
}
