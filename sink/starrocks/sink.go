package starrocks

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/clock"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
)

func init() { sink.Register("starrocks", Driver{}) }

// Driver opens starrocks:// targets (sink.Driver):
//
//	starrocks://user:pass@fe1:8030[,fe2:8030...]/db?query-port=9030
//
// The hosts are the FEs' HTTP (load) addresses, tried in turn; the MySQL
// protocol (catalog, progress) is reached on the same hosts at query-port
// (default 9030). tls=true speaks HTTPS and TLS to both, tls-ca=FILE
// trusts that CA, tls=skip-verify trusts any certificate. txn-timeout
// (default 600s) is each transaction's timeout header: the server aborts
// one not committed within it, and the engine commits a transaction kept
// open for the autonomous flush before 80% of it. catalog=SCHEMA
// reads the catalog from another schema than information_schema (the
// test fake's).
type Driver struct{}

// Options are what a Target needs besides the URL; the zero value serves.
type Options struct {
	// Clock times retries; default clock.Real.
	Clock clock.Clock
	// HTTPClient sends the Stream Load requests; default one built from
	// the URL's TLS settings.
	HTTPClient *http.Client
	// Retries bounds the client's retries of TXN_IN_PROCESSING and of
	// get_load_state (see Config.Retries); default 8.
	Retries int
}

// Open implements sink.Driver.
func (Driver) Open(ctx context.Context, raw string, env sink.Env) (sink.Sink, error) {
	t, err := Open(ctx, raw, Options{})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Target is the StarRocks sink.Sink: one commit unit is one multi-table
// Stream Load transaction (see the package doc of sink for what every
// sink guarantees, and docs/starrocks.md for how this one keeps them); in
// transaction mode the unit's parts are loaded into it ahead of its
// commit (sink.Streamer, stream.go).
//
// Exactly once: every unit's transaction carries, besides its tables'
// loads, the load of its partitions' rows into the Primary Key table
// txsink_progress, under a label unique in the database. After a lost or
// non-OK commit answer the label's state (get_load_state) decides whether
// it landed; Committed answers from that state, else from the progress.
//
// Fencing (what is guaranteed, exactly): see Claim.
type Target struct {
	client  *Client
	db      *sql.DB
	dbName  string
	catalog string
	clock   clock.Clock
	version string

	mu     sync.Mutex
	tables map[string]*Table // described tables by name

	// The fields below are touched only by Claim, Apply and Committed,
	// which the engine never runs beside each other.

	// owner is the epoch of this instance's label namespace: the epoch
	// of its first claim, granted to it alone. Its units' labels are
	// Label(pipeline, owner, seq), seq counting up from 1.
	owner map[string]int64 // by pipeline
	seq   map[string]int64 // by pipeline: the last seq used
	// epochs holds the epoch this instance claimed, per pipeline and
	// partition (claimKey).
	epochs map[string]int64
	// unsure is the label of the last unit whose commit answer was lost
	// and could not be resolved, with that unit's progress; Committed
	// resolves it through the label's state.
	unsure map[string]unsureCommit
	// open is the transaction Stream keeps open for each pipeline's next
	// unit (Stream runs beside none of the three either).
	open map[string]*shared
}

type unsureCommit struct {
	label    string
	progress []changelog.Position
}

var _ sink.Sink = (*Target)(nil)

// urlConfig is a parsed starrocks:// URL.
type urlConfig struct {
	hosts          []string // host:port of each FE's HTTP side
	user, password string
	db             string
	queryPort      string
	catalog        string
	tls            *tls.Config
	txnTimeout     time.Duration // 0: the client's default
}

var dbName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)

func parseURL(raw string) (*urlConfig, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("target url: %w; the form is starrocks://user:pass@fe-host:8030/db?query-port=9030", redactErr(err, raw))
	}
	if u.Scheme != "starrocks" {
		return nil, fmt.Errorf("target url: scheme %q is not starrocks", u.Scheme)
	}
	c := &urlConfig{db: strings.TrimPrefix(u.Path, "/"), queryPort: "9030", catalog: "information_schema"}
	if u.User != nil {
		c.user = u.User.Username()
		c.password, _ = u.User.Password()
	}
	for _, h := range strings.Split(u.Host, ",") {
		if h == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			h = net.JoinHostPort(h, "8030")
		}
		c.hosts = append(c.hosts, h)
	}
	if len(c.hosts) == 0 {
		return nil, errors.New("target url: no FE host: give starrocks://user:pass@fe-host:8030/db")
	}
	if !dbName.MatchString(c.db) {
		return nil, fmt.Errorf("target url: database %q is not a StarRocks database name: give starrocks://user:pass@fe-host:8030/db", c.db)
	}
	q := u.Query()
	for k := range q {
		switch k {
		case "query-port", "catalog", "tls", "tls-ca", "txn-timeout":
		default:
			return nil, fmt.Errorf("target url: unknown parameter %q: the StarRocks target takes query-port, tls, tls-ca, txn-timeout and catalog", k)
		}
	}
	if p := q.Get("query-port"); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("target url: query-port %q is not a port number", p)
		}
		c.queryPort = p
	}
	if v := q.Get("txn-timeout"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second || d%time.Second != 0 {
			return nil, fmt.Errorf("target url: txn-timeout %q is not a whole number of seconds, such as 600s", v)
		}
		c.txnTimeout = d
	}
	if cat := q.Get("catalog"); cat != "" {
		c.catalog = cat
	}
	switch mode := q.Get("tls"); mode {
	case "", "false":
	case "true", "skip-verify":
		c.tls = &tls.Config{InsecureSkipVerify: mode == "skip-verify"}
		if ca := q.Get("tls-ca"); ca != "" {
			pem, err := os.ReadFile(ca)
			if err != nil {
				return nil, fmt.Errorf("target url: tls-ca: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("target url: tls-ca %s holds no PEM certificate", ca)
			}
			c.tls.RootCAs = pool
		}
	default:
		return nil, fmt.Errorf("target url: tls=%q: use true, skip-verify or false", mode)
	}
	return c, nil
}

// redactErr keeps the password out of a url.Parse error, which quotes
// the URL.
func redactErr(err error, raw string) error {
	if u, perr := url.Parse(raw); perr == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			return errors.New(strings.ReplaceAll(err.Error(), p, "xxxxx"))
		}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// MinVersion is the oldest StarRocks the target accepts: multi-table
// Stream Load transactions came with 4.0.
const MinVersion = "4.0"

// Open connects to the cluster at the starrocks:// URL raw, checks its
// version (4.0 or later: multi-table transactions) and returns the target.
func Open(ctx context.Context, raw string, opt Options) (*Target, error) {
	c, err := parseURL(raw)
	if err != nil {
		return nil, &sink.Error{Op: "open", Err: err}
	}
	if opt.Clock == nil {
		opt.Clock = clock.Real
	}
	scheme := "http"
	hc := opt.HTTPClient
	if c.tls != nil {
		scheme = "https"
		if hc == nil {
			hc = &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{TLSClientConfig: c.tls}}
		}
	}
	var loads []string
	for _, h := range c.hosts {
		loads = append(loads, scheme+"://"+h)
	}
	client, err := New(Config{LoadURLs: loads, User: c.user, Password: c.password, Database: c.db, HTTPClient: hc, Clock: opt.Clock, Retries: opt.Retries, TxnTimeout: c.txnTimeout})
	if err != nil {
		return nil, &sink.Error{Op: "open", Err: err}
	}
	db, err := openSQL(ctx, c)
	if err != nil {
		return nil, err
	}
	t := &Target{client: client, db: db, dbName: c.db, catalog: c.catalog, clock: opt.Clock, tables: map[string]*Table{},
		owner: map[string]int64{}, seq: map[string]int64{}, epochs: map[string]int64{}, unsure: map[string]unsureCommit{}, open: map[string]*shared{}}
	if err := t.checkVersion(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return t, nil
}

// openSQL opens the MySQL-protocol side on the first FE that answers.
func openSQL(ctx context.Context, c *urlConfig) (*sql.DB, error) {
	var errs []error
	for _, h := range c.hosts {
		host, _, _ := net.SplitHostPort(h)
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = c.user, c.password, "tcp", net.JoinHostPort(host, c.queryPort), c.db
		cfg.InterpolateParams = true // StarRocks' MySQL side has no server-side prepared statements for every query
		if c.tls != nil {
			name := "starrocks-" + host
			if err := mysql.RegisterTLSConfig(name, c.tls.Clone()); err != nil {
				return nil, &sink.Error{Op: "open", Err: err}
			}
			cfg.TLSConfig = name
		}
		conn, err := mysql.NewConnector(cfg)
		if err != nil {
			return nil, &sink.Error{Op: "open", Err: err}
		}
		db := sql.OpenDB(conn)
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = db.PingContext(pctx)
		cancel()
		if err == nil {
			return db, nil
		}
		db.Close()
		errs = append(errs, fmt.Errorf("%s: %w", cfg.Addr, err))
	}
	return nil, &sink.Error{Op: "open", Transient: true, Err: fmt.Errorf("no FE answered on the MySQL protocol (query-port %s): %w", c.queryPort, errors.Join(errs...))}
}

var versionRE = regexp.MustCompile(`^v?(\d+)\.(\d+)`)

// checkVersion refuses a server older than MinVersion: below 4.0 a
// multi-table transaction is not there, and a unit could not be one
// transaction.
func (t *Target) checkVersion(ctx context.Context) error {
	var v string
	if err := t.db.QueryRowContext(ctx, "SELECT current_version()").Scan(&v); err != nil {
		return &sink.Error{Op: "read the server version", Err: fmt.Errorf("SELECT current_version(): %w", err), Transient: isTransientSQL(err)}
	}
	t.version = v
	m := versionRE.FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		return &sink.Error{Op: "check the server version", Err: fmt.Errorf("current_version() answered %q, which is not a StarRocks version", v)}
	}
	major, _ := strconv.Atoi(m[1])
	if major < 4 {
		return &sink.Error{Op: "check the server version", Err: fmt.Errorf("StarRocks %s is older than %s: txsink writes each commit as one multi-table Stream Load transaction, which StarRocks has from 4.0 on", strings.Fields(v)[0], MinVersion),
			Hint: "upgrade the cluster to StarRocks 4.0 or later"}
	}
	return nil
}

// Version is the server's version, as current_version() wrote it.
func (t *Target) Version() string { return t.version }

// DB is the MySQL-protocol handle (for tests and tools).
func (t *Target) DB() *sql.DB { return t.db }

func isTransientSQL(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, sql.ErrConnDone)
}

// Describe reads a table of the URL's database from the catalog. A
// Primary Key table comes back with its key; a Duplicate Key or Unique Key
// table without one, so that a stream with updates or deletes into it is
// refused at start (StarRocks applies deletes, __op = 1, to Primary Key
// tables only), and inserts (append-only: true) go in as they are; an
// Aggregate table is refused.
func (t *Target) Describe(ctx context.Context, name schema.Name) (*schema.Table, error) {
	return t.DescribeOn(ctx, t.db, name)
}

// DescribeOn is Describe through q (sink.Catalog): txsink check reads the
// catalog on a connection of its own.
func (t *Target) DescribeOn(ctx context.Context, q sink.Querier, name schema.Name) (*schema.Table, error) {
	if name.Namespace != "" && name.Namespace != t.dbName {
		return nil, &sink.Error{Op: "describe", Table: name.String(), Err: fmt.Errorf("the table is in database %s, not the URL's %s: a StarRocks transaction loads the tables of one database", name.Namespace, t.dbName)}
	}
	tbl, err := Describe(ctx, q, t.catalog, t.dbName, name.Name)
	if err != nil {
		var de *DescribeError
		if errors.As(err, &de) && de.Err == nil && strings.HasPrefix(de.Msg, "no such table") {
			return nil, &sink.Error{Op: "describe", Table: name.String(), Err: &sink.MissingTableError{Table: t.dbName + "." + name.Name}}
		}
		return nil, &sink.Error{Op: "describe", Table: name.String(), Err: err, Transient: isTransientSQL(err)}
	}
	if err := tbl.RefuseChanges(false); err != nil {
		return nil, &sink.Error{Op: "describe", Table: name.String(), Err: err}
	}
	t.mu.Lock()
	t.tables[name.Name] = tbl
	t.mu.Unlock()
	out := tbl.Table
	out.Namespace = ""
	out.Columns = append([]schema.Column(nil), tbl.Columns...)
	if !tbl.TakesDeletes() {
		out.PrimaryKey = nil
	}
	return &out, nil
}

// table returns the StarRocks view of a table a unit writes, describing
// it when this instance has not.
func (t *Target) table(ctx context.Context, st *schema.Table) (*Table, error) {
	t.mu.Lock()
	tbl := t.tables[st.Name]
	t.mu.Unlock()
	if tbl != nil {
		return tbl, nil
	}
	if _, err := t.Describe(ctx, schema.Name{Name: st.Name}); err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tables[st.Name], nil
}

// Setup creates the progress and claims tables if the catalog lacks them
// (CREATE TABLE IF NOT EXISTS, over the MySQL protocol). A table the
// catalog has is left as it is, so that a catalog served apart from the
// SQL side (the test fake's, whose tables are made through its Exec) needs
// no DDL there.
func (t *Target) Setup(ctx context.Context) error {
	for _, tc := range []struct{ name, ddl string }{{ProgressTable, ProgressDDL}, {ClaimsTable, ClaimsDDL}} {
		if _, err := Describe(ctx, t.db, t.catalog, t.dbName, tc.name); err == nil {
			continue
		}
		if _, err := t.db.ExecContext(ctx, tc.ddl); err != nil {
			return &sink.Error{Op: "create txsink's tables", Table: tc.name, Err: err, Transient: isTransientSQL(err)}
		}
	}
	return nil
}

// Progress returns the positions stored for pipeline, by partition.
func (t *Target) Progress(ctx context.Context, pipeline string) (map[string]changelog.Position, error) {
	rows, err := ReadProgress(ctx, t.db, pipeline)
	if err != nil {
		return nil, &sink.Error{Op: "read progress", Table: ProgressTable, Err: err, Transient: isTransientSQL(err)}
	}
	out := make(map[string]changelog.Position, len(rows))
	for p, r := range rows {
		out[p] = r.Position
	}
	return out, nil
}

// Close rolls back the transactions Stream left open for units that never
// came (a run that stopped between commits) and closes the MySQL-protocol
// handle. An open transaction is never left behind by Apply.
func (t *Target) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t.rollbackShared(ctx)
	return t.db.Close()
}
