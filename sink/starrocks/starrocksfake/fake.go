// Package starrocksfake is a FAKE StarRocks cluster for tests. It is not
// StarRocks and was never checked against one: it is modelled only on
// StarRocks' documentation ("Stream Load transaction interface" of v4.0,
// "Stream Load", "Change data through loading", "Strict mode") and on the
// answers the BE's stream load context writes, as read through public
// sources. A test that passes against it says that txsink speaks the
// documented protocol, not that a real cluster agrees; the StarRocks
// target's tests also run unchanged against a real cluster when
// TXSINK_TEST_STARROCKS_URL is set.
//
// What it serves:
//
//   - An FE (httptest, the load-url of port 8030) that answers 307 to a BE
//     (httptest, port 8040) for every load and for single-table
//     transaction operations, and handles multi-table transaction
//     operations (transaction_type: multi) itself. Both check Basic auth.
//   - The transaction API: POST /api/transaction/begin|prepare|commit|rollback
//     and PUT /api/transaction/load; the states PREPARE, PREPARED,
//     VISIBLE (a commit publishes at once) and ABORTED; labels unique per
//     database (begin on a used label answers LABEL_ALREADY_EXISTS with
//     ExistingJobStatus RUNNING or FINISHED; on the label of an open
//     transaction it also aborts that transaction, as the documentation's
//     precautions say; the label of an aborted transaction may be used
//     again); TXN_NOT_EXISTS for an unknown or aborted transaction; one
//     load at a time per (label, table), a second answered
//     TXN_IN_PROCESSING; the timeout, idle_transaction_timeout and
//     prepared_timeout headers, measured on the fake's clock; a failed
//     load aborts its transaction, as documented.
//   - Multi-table transactions as StarRocks >= 4.0 has them: every
//     operation carries transaction_type: multi (a mismatch is
//     INVALID_ARGUMENT), loads name any table of the one database,
//     commit needs no prepare.
//   - GET /api/{db}/get_load_state?label= answering
//     {"Status":"OK","State":...} with PREPARE, PREPARED, VISIBLE,
//     ABORTED or UNKNOWN.
//   - Plain stream load, PUT /api/{db}/{table}/_stream_load, answering
//     Success, Label Already Exists or Fail.
//   - Loads in JSON (strip_outer_array) or CSV (column_separator), with a
//     columns header of column names; __op in columns (0 upsert, 1
//     delete) on Primary Key tables only: a load naming __op into another
//     kind of table fails. A delete needs only the key columns. Values are
//     checked as the documentation describes (CHAR and VARCHAR lengths in
//     bytes, DECIMAL precision up to 38, integer ranges, DATE and
//     DATETIME without a time zone, JSON); an unqualified value is set to
//     NULL without strict_mode and filters its row with strict_mode: true;
//     a NULL into a NOT NULL column filters its row. When more rows are
//     filtered than max_filter_ratio (default 0) allows, the load fails
//     with an ErrorURL whose log names each filtered row.
//   - Conditional and partial updates of Primary Key tables ("Change data
//     through loading"): merge_condition: COL (not a key column) lets an
//     upsert replace the stored row of its key only when its COL is
//     greater than or equal to the stored one (NULL, on which the
//     documentation is silent, taken as older than any value); deletes
//     are not conditioned. partial_update: true (row mode) with a columns
//     header holding the key updates only those columns of a stored row,
//     and inserts a row not stored with the others at their DEFAULT, NULL,
//     or the type's zero for a NOT NULL column without one (0, as the
//     documentation's example shows; "" for strings). Both at once, as
//     from 3.1.3. Either header into another kind of table fails the load.
//
// The answers' spelling: operations a BE answers (loads, single-table
// operations) name their status by its code, as the BE does (OK,
// TXN_NOT_EXISTS, TXN_IN_PROCESSING, LABEL_ALREADY_EXISTS,
// INVALID_ARGUMENT, INTERNAL_ERROR); operations the FE answers (multi-table
// begin, prepare, commit, rollback) answer "FAILED" with the code in the
// Message, as the documentation's examples show, except
// LABEL_ALREADY_EXISTS. A client must accept both.
//
// Committed state, and why MariaDB: StarRocks' readers and catalog speak
// the MySQL protocol (port 9030). The fake keeps its committed rows in a
// private database of the shared MariaDB test server, one MariaDB
// transaction per StarRocks commit, so a reader over the MySQL protocol
// (go-sql-driver/mysql, as against a real FE) sees a commit whole or not
// at all and nothing of an open transaction. The alternative the module
// list offers, github.com/dolthub/go-mysql-server, is flagged there as
// not an approved release; MariaDB is a real, already required server, and
// serving the MySQL protocol ourselves would add a second fake under the
// first. The cost: a reader sees MariaDB's types, not StarRocks' (a
// BOOLEAN reads as TINYINT(1), a LARGEINT as DECIMAL(39,0), JSON as text),
// and the catalog is not information_schema: the fake writes StarRocks'
// view of its tables into a second private database, CatalogSchema, as
// the tables `tables_config` (TABLE_SCHEMA, TABLE_NAME, TABLE_ENGINE,
// TABLE_MODEL, PRIMARY_KEY, SORT_KEY) and `columns` (TABLE_SCHEMA,
// TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, IS_NULLABLE, DATA_TYPE,
// COLUMN_TYPE, CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE,
// COLUMN_KEY) with StarRocks' spellings (varchar(10) in bytes, int(11),
// decimal(p,s), PRI_KEYS), so a Describe reads "information_schema" on a
// real cluster and CatalogSchema on the fake. Tables are made with
// StarRocks DDL through Exec, the way a test makes them on a real cluster.
//
// Faults for tests are explicit: Inject queues, per operation, a 500 or
// 503 answer, a dropped connection before the work or after it (a lost
// commit answer), a leader change (the FE answers FAILED without doing
// the work; open transactions survive, as FE state is replicated), a
// TXN_IN_PROCESSING answer, or a publish timeout (the work done, FAILED
// answered).
package starrocksfake

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/txsink/txsink/clock"
	"github.com/txsink/txsink/internal/testdb"
)

// Op names an API operation, for Inject and the request log.
type Op string

// The operations a fault can be injected into.
const (
	OpBegin      Op = "begin"
	OpLoad       Op = "load"
	OpPrepare    Op = "prepare"
	OpCommit     Op = "commit"
	OpRollback   Op = "rollback"
	OpLoadState  Op = "get_load_state"
	OpStreamLoad Op = "_stream_load"
)

// Fault is what an injected failure does to one request.
type Fault int

const (
	// HTTP500 answers HTTP 500 and does nothing.
	HTTP500 Fault = iota + 1
	// HTTP503 answers HTTP 503 (a BE unavailable) and does nothing.
	HTTP503
	// DropRequest closes the connection without doing the work.
	DropRequest
	// DropAnswer does the work, then closes the connection without
	// answering: the client cannot know whether it happened.
	DropAnswer
	// LeaderChange answers as an FE that has just lost leadership:
	// {"Status":"FAILED"} and nothing done.
	LeaderChange
	// InProcessing answers TXN_IN_PROCESSING, as when another load of the
	// same (label, table) is in flight, and does nothing.
	InProcessing
	// PublishTimeout does the work (a commit is made visible) and answers
	// {"Status":"FAILED","Message":"publish timeout"}, the documentation's
	// commit answer when publishing is slow: a non-OK answer for a commit
	// that landed.
	PublishTimeout
)

// Options configure a fake.
type Options struct {
	// User and Password are the Basic auth credentials; default "root", "".
	User, Password string
	// Clock measures transaction timeouts; default clock.Real.
	Clock clock.Clock
	// DefaultTimeout is a transaction's timeout when begin names none
	// (StarRocks' stream_load_default_timeout_second); default 600s.
	DefaultTimeout time.Duration
	// Version is what SELECT current_version() answers on the MySQL
	// side, as StarRocks writes it ("4.0.1 a1b2c3d"); default "4.0.0 fake".
	Version string
	// Loaded, when set, is called with the label and the table of each
	// transaction load the fake took (answered OK), outside its lock:
	// a test waits on it for a load to be in.
	Loaded func(label, table string)
}

// Request is one request the fake received, for tests that check what a
// client sent.
type Request struct {
	Role   string // "FE" or "BE"
	Method string
	Path   string
	Header http.Header
	Bytes  int64 // the body's length as sent (Content-Length; -1 unknown)
}

// Fake is a running fake cluster. Its methods are safe for concurrent use.
type Fake struct {
	opt     Options
	fe, be  *httptest.Server
	data    *testdb.DB // committed rows
	catalog *testdb.DB // StarRocks' view of the tables

	mu       sync.Mutex
	tables   map[string]*Table
	labels   map[string]*txn // by label, in the one database
	nextTxn  int64
	faults   map[Op][]Fault
	requests []Request
	errLogs  map[string]string

	// loadReading, when set (by this package's tests), is told each time
	// a load has claimed its (label, table) and starts reading its body.
	loadReading chan<- string
}

// New starts a fake on loopback ports, its committed state in private
// databases of the MariaDB test server; everything stops when the test
// ends.
func New(t testing.TB, opt Options) *Fake {
	t.Helper()
	if opt.User == "" {
		opt.User = "root"
	}
	if opt.Clock == nil {
		opt.Clock = clock.Real
	}
	if opt.DefaultTimeout == 0 {
		opt.DefaultTimeout = 600 * time.Second
	}
	if opt.Version == "" {
		opt.Version = "4.0.0 fake"
	}
	f := &Fake{opt: opt, tables: map[string]*Table{}, labels: map[string]*txn{}, faults: map[Op][]Fault{}, errLogs: map[string]string{}, nextTxn: 1000}
	f.data = testdb.MySQL(t)
	f.catalog = testdb.MySQL(t)
	// StarRocks' current_version(), as a stored function of the database
	// readers connect to, so that it is called unqualified as on an FE.
	f.data.Exec(t, "CREATE FUNCTION current_version() RETURNS VARCHAR(64) DETERMINISTIC RETURN "+sqlString(opt.Version))
	f.catalog.Exec(t,
		"CREATE TABLE tables_config (TABLE_SCHEMA VARCHAR(64) NOT NULL, TABLE_NAME VARCHAR(64) NOT NULL, TABLE_ENGINE VARCHAR(16) NOT NULL, "+
			"TABLE_MODEL VARCHAR(16) NOT NULL, PRIMARY_KEY VARCHAR(1024) NOT NULL, SORT_KEY VARCHAR(1024) NOT NULL, PRIMARY KEY (TABLE_SCHEMA, TABLE_NAME))",
		"CREATE TABLE columns (TABLE_SCHEMA VARCHAR(64) NOT NULL, TABLE_NAME VARCHAR(64) NOT NULL, COLUMN_NAME VARCHAR(64) NOT NULL, "+
			"ORDINAL_POSITION BIGINT NOT NULL, IS_NULLABLE VARCHAR(3) NOT NULL, DATA_TYPE VARCHAR(32) NOT NULL, COLUMN_TYPE VARCHAR(64) NOT NULL, "+
			"CHARACTER_MAXIMUM_LENGTH BIGINT NULL, NUMERIC_PRECISION BIGINT NULL, NUMERIC_SCALE BIGINT NULL, COLUMN_KEY VARCHAR(3) NOT NULL, "+
			"PRIMARY KEY (TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME))")
	f.be = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f.serve("BE", w, r) }))
	f.fe = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f.serve("FE", w, r) }))
	t.Cleanup(func() { f.fe.Close(); f.be.Close() })
	return f
}

// NewWithTables is New with the MariaDB test user's credentials (see
// MySQLCredentials: SinkURL then reaches both sides) and ddl run through
// Exec, in order; a failure fails t.
func NewWithTables(t testing.TB, opt Options, ddl ...string) *Fake {
	t.Helper()
	opt.User, opt.Password = MySQLCredentials(t)
	f := New(t, opt)
	for _, s := range ddl {
		if err := f.Exec(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// URL is the FE's base URL, the load-url (http://127.0.0.1:port).
func (f *Fake) URL() string { return f.fe.URL }

// BEURL is the BE's base URL, where the FE redirects loads.
func (f *Fake) BEURL() string { return f.be.URL }

// Database is the one StarRocks database the fake serves; it is also the
// name of the MariaDB database holding its committed rows.
func (f *Fake) Database() string { return f.dbName() }

func (f *Fake) dbName() string {
	i := strings.LastIndexByte(f.data.URL, '/')
	return f.data.URL[i+1:]
}

// SQL is a MySQL-protocol connection to the committed rows, as a reader on
// a real FE's port 9030 would have.
func (f *Fake) SQL() *sql.DB { return f.data.SQL }

// MySQLURL is the mysql:// URL of the committed rows' database.
func (f *Fake) MySQLURL() string { return f.data.URL }

// CatalogSchema is the database holding the fake's `tables_config` and
// `columns`, StarRocks' information_schema views of its tables.
func (f *Fake) CatalogSchema() string {
	i := strings.LastIndexByte(f.catalog.URL, '/')
	return f.catalog.URL[i+1:]
}

// SinkURL is the txsink target URL of the fake, for a pipeline config:
// starrocks://user:pass@127.0.0.1:fe-port/db?query-port=...&catalog=...,
// its MySQL side being the MariaDB database of the committed rows (which
// needs the MariaDB test user's credentials: start the fake with them,
// Options.User and Password, for the URL to reach both sides) and catalog
// naming CatalogSchema, which a real cluster has no need of. The URL's
// one host serves both sides, so the MariaDB test server must listen on
// the FE's address, 127.0.0.1 (the default TXSINK_TEST_MYSQL_URL).
func (f *Fake) SinkURL() string {
	my, err := url.Parse(f.data.URL)
	if err != nil {
		panic("starrocks fake: " + err.Error())
	}
	fe, _ := url.Parse(f.fe.URL)
	u := url.URL{Scheme: "starrocks", User: url.UserPassword(f.opt.User, f.opt.Password), Host: fe.Host, Path: "/" + f.dbName()}
	q := url.Values{"query-port": {my.Port()}, "catalog": {f.CatalogSchema()}}
	u.RawQuery = q.Encode()
	return u.String()
}

// MySQLCredentials are the user and password of the MariaDB test server
// the fake keeps its rows in: start a fake with them (Options.User,
// Password) for SinkURL to reach both its sides with one user, as a real
// FE's HTTP and MySQL ports take one.
func MySQLCredentials(t testing.TB) (user, password string) {
	t.Helper()
	u, err := url.Parse(testdb.MySQLBase())
	if err != nil {
		t.Fatal(err)
	}
	p, _ := u.User.Password()
	return u.User.Username(), p
}

func sqlString(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", "''") + "'"
}

// Inject queues faults for the next requests of op, one fault per request.
func (f *Fake) Inject(op Op, faults ...Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults[op] = append(f.faults[op], faults...)
}

// Requests returns the requests received so far, in order.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

// LabelState returns the state of label's transaction, as get_load_state
// would answer it.
func (f *Fake) LabelState(label string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.expireLocked()
	if x := f.labels[label]; x != nil {
		return x.state
	}
	return "UNKNOWN"
}

// Exec runs one StarRocks DDL statement: CREATE TABLE (with PRIMARY KEY,
// DUPLICATE KEY, UNIQUE KEY or AGGREGATE KEY) or DROP TABLE; or an INSERT
// INTO ... VALUES, which it commits at once as one transaction (StarRocks
// runs INSERT as a load), in the MariaDB database as written: a test's
// starting rows.
func (f *Fake) Exec(ctx context.Context, ddl string) error {
	if fields := strings.Fields(ddl); len(fields) > 2 && strings.EqualFold(fields[0], "INSERT") && strings.EqualFold(fields[1], "INTO") {
		f.mu.Lock()
		defer f.mu.Unlock()
		if _, err := f.data.SQL.ExecContext(ctx, ddl); err != nil {
			return fmt.Errorf("starrocks fake: %s: %w", ddl, err)
		}
		return nil
	}
	st, err := parseDDL(ddl)
	if err != nil {
		return fmt.Errorf("starrocks fake: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	db := f.dbName()
	if st.drop != "" {
		if _, ok := f.tables[st.drop]; !ok {
			if st.ifNot {
				return nil
			}
			return fmt.Errorf("starrocks fake: table %s does not exist", st.drop)
		}
		if _, err := f.data.SQL.ExecContext(ctx, "DROP TABLE "+quote(st.drop)); err != nil {
			return fmt.Errorf("starrocks fake: drop table %s: %w", st.drop, err)
		}
		for _, q := range []string{"DELETE FROM tables_config WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", "DELETE FROM columns WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?"} {
			if _, err := f.catalog.SQL.ExecContext(ctx, q, db, st.drop); err != nil {
				return fmt.Errorf("starrocks fake: drop table %s from the catalog: %w", st.drop, err)
			}
		}
		delete(f.tables, st.drop)
		return nil
	}
	t := st.create
	if _, ok := f.tables[t.Name]; ok {
		if st.ifNot {
			return nil
		}
		return fmt.Errorf("starrocks fake: table %s already exists", t.Name)
	}
	var b strings.Builder
	b.WriteString("CREATE TABLE " + quote(t.Name) + " (")
	for i := range t.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(t.Columns[i].Name) + " " + mariaType(&t.Columns[i]))
	}
	if t.Model != DuplicateKeys {
		b.WriteString(", PRIMARY KEY (" + quoteList(t.Key) + ")")
	}
	b.WriteString(")")
	if _, err := f.data.SQL.ExecContext(ctx, b.String()); err != nil {
		return fmt.Errorf("starrocks fake: create table %s: %w", t.Name, err)
	}
	keys := make([]string, len(t.Key))
	for i, k := range t.Key {
		keys[i] = "`" + k + "`"
	}
	pk := ""
	if t.Model == PrimaryKeys {
		pk = strings.Join(keys, ", ")
	}
	if _, err := f.catalog.SQL.ExecContext(ctx, "INSERT INTO tables_config VALUES (?, ?, 'OLAP', ?, ?, ?)", db, t.Name, string(t.Model), pk, strings.Join(keys, ", ")); err != nil {
		return fmt.Errorf("starrocks fake: catalog of %s: %w", t.Name, err)
	}
	colKey := map[Model]string{PrimaryKeys: "PRI", UniqueKeys: "UNI", DuplicateKeys: "DUP", AggregateKeys: "AGG"}[t.Model]
	for i, c := range t.Columns {
		dt, ct := starType(&c)
		var length, prec, scale any
		if c.Type == "CHAR" || c.Type == "VARCHAR" {
			length = c.Length
		}
		if c.Type == "DECIMAL" {
			prec, scale = c.Precision, c.Scale
		}
		nullable, key := "YES", ""
		if !c.Nullable {
			nullable = "NO"
		}
		if c.Key {
			key = colKey
		}
		if _, err := f.catalog.SQL.ExecContext(ctx, "INSERT INTO columns VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			db, t.Name, c.Name, i+1, nullable, dt, ct, length, prec, scale, key); err != nil {
			return fmt.Errorf("starrocks fake: catalog of %s.%s: %w", t.Name, c.Name, err)
		}
	}
	f.tables[t.Name] = t
	return nil
}

func quote(n string) string { return "`" + strings.ReplaceAll(n, "`", "``") + "`" }

func quoteList(ns []string) string {
	q := make([]string, len(ns))
	for i, n := range ns {
		q[i] = quote(n)
	}
	return strings.Join(q, ", ")
}

// answer is one JSON reply. Keys are those StarRocks uses.
type answer map[string]any

func (f *Fake) serve(role string, w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, Request{Role: role, Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Bytes: r.ContentLength})
	f.mu.Unlock()
	if role == "BE" && r.URL.Path == "/api/_load_error_log" {
		// The ErrorURL of an answer is fetched without credentials.
		f.mu.Lock()
		text, ok := f.errLogs[r.URL.Query().Get("file")]
		f.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, text)
		return
	}
	if u, p, ok := r.BasicAuth(); !ok || u != f.opt.User || p != f.opt.Password {
		w.Header().Set("WWW-Authenticate", `Basic realm="starrocks"`)
		http.Error(w, `{"Status":"FAILED","Message":"Access denied: wrong user name or password"}`, http.StatusUnauthorized)
		return
	}
	path := r.URL.Path
	multi := strings.EqualFold(r.Header.Get("transaction_type"), "multi")
	var op Op
	switch {
	case strings.HasPrefix(path, "/api/transaction/"):
		op = Op(strings.TrimPrefix(path, "/api/transaction/"))
		want := http.MethodPost
		if op == OpLoad {
			want = http.MethodPut
		}
		switch op {
		case OpBegin, OpLoad, OpPrepare, OpCommit, OpRollback:
		default:
			http.NotFound(w, r)
			return
		}
		if r.Method != want {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		// The FE keeps multi-table transactions itself; everything else
		// is the BE's.
		if role == "FE" && (op == OpLoad || !multi) {
			f.redirect(w, r)
			return
		}
	case strings.HasSuffix(path, "/get_load_state"):
		op = OpLoadState
	case strings.HasSuffix(path, "/_stream_load"):
		op = OpStreamLoad
		if role == "FE" {
			f.redirect(w, r)
			return
		}
	default:
		http.NotFound(w, r)
		return
	}
	fault := f.takeFault(op)
	switch fault {
	case HTTP500, HTTP503:
		code := map[Fault]int{HTTP500: 500, HTTP503: 503}[fault]
		http.Error(w, fmt.Sprintf("injected HTTP %d", code), code)
		return
	case DropRequest:
		hangUp(w)
		return
	case LeaderChange:
		writeJSON(w, answer{"Status": "FAILED", "Message": "injected leader change: this FE is not the leader, retry"})
		return
	case InProcessing:
		writeJSON(w, answer{"Status": "TXN_IN_PROCESSING", "Label": r.Header.Get("label"), "Message": "Transaction is in processing (injected)"})
		return
	}
	var a answer
	switch op {
	case OpLoadState:
		a = f.loadState(r)
	case OpStreamLoad:
		a = f.streamLoad(r)
	case OpLoad:
		a = f.load(r, multi)
	default:
		a = f.txnOp(role, op, r, multi)
	}
	switch fault {
	case DropAnswer:
		hangUp(w)
		return
	case PublishTimeout:
		a = answer{"Status": "FAILED", "Label": a["Label"], "TxnId": a["TxnId"], "Message": "publish timeout", "CommitAndPublishTimeMs": 1393}
	}
	writeJSON(w, a)
}

func (f *Fake) takeFault(op Op) Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.faults[op]
	if len(q) == 0 {
		return 0
	}
	f.faults[op] = q[1:]
	return q[0]
}

func (f *Fake) redirect(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Location", f.be.URL+r.URL.RequestURI())
	w.WriteHeader(http.StatusTemporaryRedirect)
}

func hangUp(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("starrocks fake: the response cannot be hijacked")
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		conn.Close()
	}
}

func writeJSON(w http.ResponseWriter, a answer) {
	w.Header().Set("Content-Type", "application/json")
	b, _ := json.MarshalIndent(a, "", "    ")
	w.Write(b)
}
