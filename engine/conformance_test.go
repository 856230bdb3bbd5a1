package engine_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
)

// conformanceDir holds the changelog fixtures of other projects, beside the
// repository (see ../shared/conformance/README.md).
const conformanceDir = "../../shared/conformance"

func conformance(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join(conformanceDir, rel)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("conformance fixture %s is missing: CI must have ../shared beside the repository", p)
		}
		t.Skipf("conformance fixtures not found at %s (they live in ../shared beside the repository)", p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// finalState is a fixture's X.final.json.
type finalState struct {
	PrimaryKey []string         `json:"primary_key"`
	Columns    []string         `json:"columns"`
	Rows       []map[string]any `json:"rows"`
}

// conformanceCase is one fixture, or one Paimon case: files applied in
// order, each followed by a look at the table.
type conformanceCase struct {
	files   []string          // relative to conformanceDir, in order
	format  string            // source.format
	options map[string]string // source.format-options
	source  string            // tables[].source
	// skipUnknown sets skip-unknown-tables: with a source pattern it is
	// how a pipeline keeps only some tables of a mixed stream.
	skipUnknown bool
	// txns is how many source transactions transaction mode commits over
	// all files, and firstTxn how many rows the first of them leaves in
	// the table: a commit holds whole source transactions.
	txns, firstTxn int
	// txnRefusal, when set, is what transaction mode does instead of
	// applying the case (see the case).
	txnRefusal func(t *testing.T, db *testdb.DB, results []runResult)
}

// conformanceCases are the fixtures with an expected table: a .final.json
// (the Flink fixtures; derived by the fixture's authors from the peer's
// changelog) or a .state.expected.txt after each file (the Paimon cases;
// asserted by Paimon).
var conformanceCases = []conformanceCase{
	// Flink's products fixtures. No transaction metadata: each record is
	// a source transaction of its own.
	{files: []string{"debezium/debezium-data-schema-include.txt"}, format: "debezium-json", source: "inventory.products", txns: 16, firstTxn: 1},
	{files: []string{"debezium/debezium-data-schema-exclude.txt"}, format: "debezium-json", source: "inventory.products", txns: 16, firstTxn: 1},
	{files: []string{"debezium/debezium-postgres-data-schema-include.txt"}, format: "debezium-json", source: "inventory.products", txns: 16, firstTxn: 1},
	{files: []string{"debezium/debezium-postgres-data-schema-exclude.txt"}, format: "debezium-json", source: "inventory.products", txns: 16, firstTxn: 1},
	// One Canal message is one transaction however many rows it holds:
	// 11 messages, one of them DDL (skipped).
	{files: []string{"canal/canal-data.txt"}, format: "canal-json", source: "inventory.products2", txns: 10, firstTxn: 9},
	// Flink filters this mixed stream with database "^my.*" and table
	// "^prod.*"; a pipeline does it with a tables pattern and
	// skip-unknown-tables (canal-json takes no options). The records of
	// mydb.orders and mydb.project are skipped (the latter's ids, "A101",
	// would not fit the INT key), and still count as transactions: 16
	// messages, two of them DDL.
	{files: []string{"canal/canal-data-filter-table.txt"}, format: "canal-json", source: "my*.prod*", skipUnknown: true, txns: 14, firstTxn: 9},
	// 20 records, four of them a -U, each one transaction with the +U
	// that follows it (it may move the key).
	{files: []string{"changelog-json/changelog-json-data.txt"}, format: "flink-changelog-json",
		options: map[string]string{"flink-changelog-json.table": "inventory.products"}, source: "inventory.products", txns: 16, firstTxn: 1},
	// Maxwell's xid/commit: xid 7125 holds the first 9 rows.
	{files: []string{"maxwell/maxwell-data.txt"}, format: "maxwell-json", source: "test.product", txns: 10, firstTxn: 9},
	{files: []string{"ogg/ogg-data.txt"}, format: "ogg-json", source: "OGG.TBL_TEST", txns: 16, firstTxn: 1},

	// Paimon's cases: the table after each file is asserted. Files 2 and 3
	// of the schema-evolution cases add columns age and address.
	{files: []string{"debezium/paimon-schemaevolution/debezium-data-1.txt", "debezium/paimon-schemaevolution/debezium-data-2.txt", "debezium/paimon-schemaevolution/debezium-data-3.txt"},
		format: "debezium-json", source: "test.product", txns: 8, firstTxn: 1},
	{files: []string{"maxwell/paimon-schemaevolution/maxwell-data-1.txt", "maxwell/paimon-schemaevolution/maxwell-data-2.txt", "maxwell/paimon-schemaevolution/maxwell-data-3.txt"},
		format: "maxwell-json", source: "test.product", txnRefusal: maxwellPaimonTxns},
	{files: []string{"ogg/paimon-schemaevolution/ogg-data-1.txt", "ogg/paimon-schemaevolution/ogg-data-2.txt", "ogg/paimon-schemaevolution/ogg-data-3.txt"},
		format: "ogg-json", source: "OGG.TBL_TEST", txns: 8, firstTxn: 1},
	{files: []string{"ogg/paimon-event/event-insert.txt", "ogg/paimon-event/event-update.txt", "ogg/paimon-event/event-delete.txt"},
		format: "ogg-json", source: "OGG.EVENT", txns: 5, firstTxn: 1},
}

// conformanceModes are the ways each case is applied: flushing every 3
// rows (so runs cross many flush boundaries), in one flush, and in
// transaction mode committing each source transaction as soon as it ends
// (a one-byte buffer is always full; see TestSeed000Section19).
var conformanceModes = []struct {
	name string
	txn  bool
	set  func(*config.Config)
}{
	{"flush-3", false, func(c *config.Config) { c.Sink.FlushMaxRows = 3 }},
	{"flush-1000", false, func(c *config.Config) { c.Sink.FlushMaxRows = 1000 }},
	{"transaction", true, func(c *config.Config) {
		txnPipeline(c)
		c.Sink.TxnMiniSwitchInterval = 0
		c.Sink.TxnBufferSize = 1
	}},
}

// TestConformanceApply applies every fixture that has an expected table to
// every server through the file source, in every mode, and compares the
// table with the expectation after each file.
//
// txsink does not alter target tables, so a Paimon schema-evolution case
// gets one table up front with the union of the columns of its files, each
// of the widest type it reaches; a row written before a column existed
// leaves it NULL, which is what Paimon asserts. The files are applied by
// consecutive runs of one pipeline (same name), each listing the files so
// far: progress carries, and nothing is applied twice.
func TestConformanceApply(t *testing.T) {
	for _, tc := range conformanceCases {
		t.Run(tc.name(), func(t *testing.T) {
			t.Parallel()
			fx := loadFixture(t, tc)
			forEachDialect(t, func(t *testing.T, db *testdb.DB) {
				db.Exec(t, fx.createTable(db.Dialect))
				for _, mode := range conformanceModes {
					t.Run(mode.name, func(t *testing.T) {
						db.Exec(t, "DELETE FROM "+conformanceTable)
						var afterCommit []string // row counts after each commit
						var results []runResult
						for i := range fx.paths {
							cfg := tc.config(db, fx.paths[:i+1])
							cfg.Name = "conformance-" + mode.name
							mode.set(cfg)
							var opts []engine.Option
							if mode.txn {
								// Transaction mode commits on Run's goroutine.
								opts = append(opts, engine.WithCommitHook(func(*commit.Unit) {
									afterCommit = append(afterCommit, query(t, db, "SELECT COUNT(*) FROM "+conformanceTable))
								}))
							}
							r := runPipeline(t, cfg, opts...)
							results = append(results, r)
							if mode.txn && tc.txnRefusal != nil {
								continue
							}
							if r.err != nil {
								t.Fatalf("%s: %v", tc.files[i], r.err)
							}
							fx.want[i].check(t, db, tc.files[i])
						}
						if !mode.txn || tc.txnRefusal == nil {
							checkProgress(t, db, "conformance-"+mode.name, fx.paths)
						}
						if !mode.txn {
							return
						}
						if tc.txnRefusal != nil {
							tc.txnRefusal(t, db, results)
							return
						}
						var txns int64
						for _, r := range results {
							txns += r.stats.Txns
						}
						if txns != int64(tc.txns) {
							t.Errorf("%d source transactions committed, want %d", txns, tc.txns)
						}
						if len(afterCommit) == 0 || afterCommit[0] != strconv.Itoa(tc.firstTxn) {
							t.Errorf("rows after each commit %v: the first commit should hold the first source transaction, %d rows", afterCommit, tc.firstTxn)
						}
					})
				}
			})
		})
	}
}

// checkProgress checks that the pipeline's progress is past the last
// record of every file (blank lines after it are not records): each was
// read to its end, by the run that first listed it.
// checkProgress checks the progress of a pipeline whose source.paths are
// paths: one partition, named after the first, that stands after the last
// record of the last file (the files before it are read to their ends).
func checkProgress(t *testing.T, db *testdb.DB, pipeline string, paths []string) {
	t.Helper()
	var before, end int
	for i, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if i < len(paths)-1 {
			before += len(data)
			continue
		}
		end = len(bytes.TrimRight(data, " \t\r\n"))
		if i := bytes.IndexByte(data[end:], '\n'); i >= 0 {
			end += i + 1
		}
	}
	want := fmt.Sprintf("%s|%d", paths[0], before+end)
	got := query(t, db, "SELECT source_partition, position FROM txsink_progress WHERE pipeline = '"+pipeline+"' ORDER BY source_partition")
	if got != want {
		t.Errorf("progress of %s:\n%s\nwant\n%s", pipeline, got, want)
	}
}

// maxwellPaimonTxns is what transaction mode does with Paimon's Maxwell
// case. Its xid/xoffset/commit values are synthetic (README: Paimon ignores
// them): files 1 and 2 are four rows of xid 7125 without "commit": true,
// and file 3 goes on with xid 7125 (xoffset 4, then a delete at xoffset 0)
// and then, on line 21, an update of xid 7216 — while 7125 is still open.
// A transaction that never ends is never committed (the run ends with it
// reported open, and the next run reads it again), and a change of another
// transaction inside an open one is refused: committing either would split
// a source transaction. So the table stays empty, where Paimon, which
// ignores transactions, has rows. Plain mode applies the case as Paimon
// does.
func maxwellPaimonTxns(t *testing.T, db *testdb.DB, results []runResult) {
	t.Helper()
	for i, r := range results[:2] {
		// Run i+1 reads files 1 to i+1, one partition read one file after
		// another, with xid 7125 open at its end: reported, not committed.
		if r.err != nil || r.stats.Txns != 0 || r.stats.Commits != 0 || r.status.OpenTxns != 1 {
			t.Errorf("run %d: err %v, %d transactions in %d commits, %d open; want no error, nothing committed, 1 open (xid 7125 never ends)",
				i+1, r.err, r.stats.Txns, r.stats.Commits, r.status.OpenTxns)
		}
	}
	err := results[2].err
	if err == nil {
		t.Fatal("run 3 succeeded, want the refusal of xid 7216 inside open xid 7125")
	}
	t.Logf("refusal: %v", err)
	for _, w := range []string{"maxwell-data-3.txt:21", "7125", "7216"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	if got := query(t, db, "SELECT COUNT(*) FROM "+conformanceTable); got != "0" {
		t.Errorf("%s rows committed, want 0", got)
	}
}

// conformanceTable is the target table of every case; each case has
// databases of its own.
const conformanceTable = "products"

// name names a case's subtest: the fixture, or the folder of a Paimon
// case's files.
func (tc conformanceCase) name() string {
	if len(tc.files) > 1 {
		return filepath.Dir(tc.files[0])
	}
	return strings.TrimSuffix(tc.files[0], ".txt")
}

func (tc conformanceCase) config(db *testdb.DB, paths []string) *config.Config {
	cfg := pipeline(db, config.Table{Source: tc.source, Target: conformanceTable})
	cfg.Source.Format = tc.format
	cfg.Source.FormatOptions = tc.options
	cfg.Source.Set("paths", paths)
	cfg.SkipUnknownTables = tc.skipUnknown
	return cfg
}

// runResult is how one run of a pipeline ended.
type runResult struct {
	stats  engine.Stats
	status engine.Status
	err    error
}

// runPipeline runs a pipeline to the end of its files and closes it, so
// the many runs of a test do not hold connections.
func runPipeline(t *testing.T, cfg *config.Config, opts ...engine.Option) runResult {
	t.Helper()
	e, err := engine.New(context.Background(), cfg, opts...)
	if err != nil {
		t.Fatalf("engine.New: %v", err)
	}
	defer e.Close()
	err = e.Run(context.Background(), engine.RunOptions{})
	return runResult{stats: e.Stats(), status: e.Status(), err: err}
}

// fixture is a case read from disk: the files to feed, the table to
// create, and the expected table after each file.
type fixture struct {
	paths   []string
	columns []column
	key     []string
	want    []expected
}

// column is a line of a .schema.txt: a column and its Flink type.
type column struct {
	name, typ string
	notNull   bool
}

// expected is a table the peer expects: values as text, by key.
type expected struct {
	columns []string
	floats  map[string]bool // FLOAT columns, compared at float32 precision
	key     int             // index of the key column
	rows    map[string][]string
}

func loadFixture(t *testing.T, tc conformanceCase) fixture {
	t.Helper()
	var fx fixture
	var schemas [][]column
	for _, rel := range tc.files {
		path := conformance(t, rel)
		fx.paths = append(fx.paths, feedable(t, path))
		cols := readSchema(t, path+".schema.txt")
		schemas = append(schemas, cols)
		var final finalState
		readJSON(t, path+".final.json", &final)
		if fx.key == nil {
			fx.key = final.PrimaryKey
		} else if !slices.Equal(fx.key, final.PrimaryKey) {
			t.Fatalf("%s: key %v, earlier files %v", rel, final.PrimaryKey, fx.key)
		}
		if len(fx.key) != 1 {
			t.Fatalf("%s: key %v, want one column", rel, fx.key)
		}
		var w expected
		if state, err := os.ReadFile(path + ".state.expected.txt"); err == nil {
			w = stateRows(t, rel, cols, fx.key[0], string(state))
		} else {
			w = finalRows(t, rel, cols, fx.key[0], final)
		}
		fx.want = append(fx.want, w)
	}
	fx.columns = unionColumns(t, schemas)
	return fx
}

// feedable returns path, or when the file has lines that are not JSON
// records (the Paimon files start with a license comment), a copy with
// those lines blanked: the peer's harness sends only the JSON lines to
// Kafka. The file source skips blank lines but counts them, so positions
// and line numbers stay those of the fixture.
func feedable(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(data, []byte("\n"))
	changed := false
	for i, l := range lines {
		if len(bytes.TrimSpace(l)) > 0 && !bytes.HasPrefix(l, []byte("{")) {
			lines[i], changed = nil, true
		}
	}
	if !changed {
		return path
	}
	dir := filepath.Join(t.TempDir(), filepath.Base(filepath.Dir(path)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, filepath.Base(path))
	if err := os.WriteFile(out, bytes.Join(lines, []byte("\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// commentedLines returns the lines of a fixture's notes (.schema.txt,
// .expected-error.txt) without their "#" comments, blank lines left out.
func commentedLines(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(raw), "\n") {
		if l, _, _ = strings.Cut(l, "#"); strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// readSchema reads the columns of a .schema.txt ("name TYPE [NOT NULL]"
// lines and a "PRIMARY KEY (...)" line).
func readSchema(t *testing.T, path string) []column {
	t.Helper()
	var cols []column
	for _, l := range commentedLines(t, path) {
		f := strings.Fields(l)
		if len(f) < 2 || f[0] == "PRIMARY" {
			continue
		}
		cols = append(cols, column{name: f[0], typ: f[1], notNull: strings.Contains(l, "NOT NULL")})
	}
	if len(cols) == 0 {
		t.Fatalf("%s: no columns", path)
	}
	return cols
}

// typeRank orders the Flink types of the fixtures from narrowest to
// widest: a column keeps the widest type it reaches over a case's files.
var typeRank = map[string]int{"INT": 0, "FLOAT": 1, "STRING": 2}

// unionColumns merges the schemas of a case's files: every column in order
// of first appearance, of the widest type it has, NOT NULL only if it is
// NOT NULL in every file (rows of a file without it leave it NULL).
func unionColumns(t *testing.T, schemas [][]column) []column {
	t.Helper()
	var out []column
	for _, cols := range schemas {
		for _, c := range cols {
			if _, ok := typeRank[c.typ]; !ok {
				t.Fatalf("column %s: type %s has no SQL type here", c.name, c.typ)
			}
			i := slices.IndexFunc(out, func(o column) bool { return o.name == c.name })
			if i < 0 {
				out = append(out, c)
				continue
			}
			if typeRank[c.typ] > typeRank[out[i].typ] {
				out[i].typ = c.typ
			}
			out[i].notNull = out[i].notNull && c.notNull
		}
	}
	for i := range out {
		for _, cols := range schemas {
			if !slices.ContainsFunc(cols, func(c column) bool { return c.name == out[i].name }) {
				out[i].notNull = false
			}
		}
	}
	return out
}

// createTable is the CREATE TABLE of the fixture's table. FLOAT is a
// 4-byte float as in the source: FLOAT on MariaDB, REAL elsewhere.
func (fx fixture) createTable(dialect string) string {
	sqlType := map[string]string{"INT": "INT", "STRING": "VARCHAR(255)", "FLOAT": "REAL"}
	if dialect == "mysql" {
		sqlType["FLOAT"] = "FLOAT"
	}
	var defs []string
	for _, c := range fx.columns {
		d := c.name + " " + sqlType[c.typ]
		if c.notNull {
			d += " NOT NULL"
		}
		defs = append(defs, d)
	}
	defs = append(defs, "PRIMARY KEY ("+strings.Join(fx.key, ", ")+")")
	return "CREATE TABLE " + conformanceTable + " (" + strings.Join(defs, ", ") + ")"
}

func newExpected(t *testing.T, rel string, cols []column, key string, names []string) expected {
	t.Helper()
	w := expected{columns: names, floats: map[string]bool{}, key: slices.Index(names, key), rows: map[string][]string{}}
	if w.key < 0 {
		t.Fatalf("%s: expected columns %v lack key %s", rel, names, key)
	}
	for _, c := range cols {
		if c.typ == "FLOAT" {
			w.floats[c.name] = true
		}
	}
	return w
}

func (w expected) add(t *testing.T, rel string, vals []string) {
	t.Helper()
	if len(vals) != len(w.columns) {
		t.Fatalf("%s: row %v has %d values, want %d (%v)", rel, vals, len(vals), len(w.columns), w.columns)
	}
	w.rows[vals[w.key]] = vals
}

// finalRows reads a .final.json: numbers in the shortest text, null as
// NULL (how query renders it).
func finalRows(t *testing.T, rel string, cols []column, key string, f finalState) expected {
	t.Helper()
	w := newExpected(t, rel, cols, key, f.Columns)
	for _, r := range f.Rows {
		vals := make([]string, len(f.Columns))
		for i, c := range f.Columns {
			switch v := r[c].(type) {
			case nil:
				vals[i] = "NULL"
			case string:
				vals[i] = v
			case float64:
				vals[i] = strconv.FormatFloat(v, 'f', -1, 64)
			default:
				t.Fatalf("%s: column %s: unexpected %#v", rel, c, v)
			}
		}
		w.add(t, rel, vals)
	}
	return w
}

// stateRows reads a Paimon .state.expected.txt, Flink's Row.toString of
// each row, +I[101, scooter, ..., NULL], over the columns of the file's
// .schema.txt. No value of the fixtures holds ", ".
func stateRows(t *testing.T, rel string, cols []column, key, text string) expected {
	t.Helper()
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	w := newExpected(t, rel, cols, key, names)
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		inner, ok := strings.CutPrefix(l, "+I[")
		if !ok || !strings.HasSuffix(inner, "]") {
			t.Fatalf("%s: state line %q is not +I[...]", rel, l)
		}
		w.add(t, rel, strings.Split(strings.TrimSuffix(inner, "]"), ", "))
	}
	return w
}

// check compares the table with w on w's columns.
func (w expected) check(t *testing.T, db *testdb.DB, rel string) {
	t.Helper()
	got := tableRows(t, db, w.columns, w.key)
	for k, want := range w.rows {
		g, ok := got[k]
		if !ok {
			t.Errorf("after %s: row %s missing, want %v", rel, k, want)
			continue
		}
		for i, c := range w.columns {
			same := g[i] == want[i]
			if w.floats[c] && want[i] != "NULL" {
				f, err := strconv.ParseFloat(want[i], 64)
				same = err == nil && sameFloat32(g[i], f)
			}
			if !same {
				t.Errorf("after %s: row %s column %s = %q, want %q (row %v, want %v)", rel, k, c, g[i], want[i], g, want)
			}
		}
	}
	for k, g := range got {
		if _, ok := w.rows[k]; !ok {
			t.Errorf("after %s: unexpected row %v", rel, g)
		}
	}
}

// tableRows reads the columns of the table, by the value of column key.
// Values are taken as the server's text, without query's normalization,
// so a text column must hold the expected text exactly; NULL is "NULL".
func tableRows(t *testing.T, db *testdb.DB, columns []string, key int) map[string][]string {
	t.Helper()
	q := "SELECT " + strings.Join(columns, ", ") + " FROM " + conformanceTable
	rows, err := db.SQL.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	out := map[string][]string{}
	vals := make([]sql.NullString, len(columns))
	ptrs := make([]any, len(columns))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		r := make([]string, len(vals))
		for i, v := range vals {
			r[i] = "NULL"
			if v.Valid {
				r[i] = v.String
			}
		}
		if _, dup := out[r[key]]; dup {
			t.Fatalf("two rows with key %s", r[key])
		}
		out[r[key]] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameFloat32 compares a FLOAT column's text with the fixture's value at
// float32 precision: the fixtures print the float32 a source FLOAT held.
func sameFloat32(got string, want float64) bool {
	g, err := strconv.ParseFloat(got, 64)
	if err != nil {
		return false
	}
	return float32(g) == float32(want)
}

// TestConformanceReplicaIdentity checks the fixture whose updates lack a
// before image (PostgreSQL REPLICA IDENTITY DEFAULT) on every server and in
// every mode: the run stops at line 10 with the peer's message, and
// nothing from line 10 on is committed. The peer decodes the file as a
// whole and asserts no rows; a sink commits as it goes, so the snapshot
// rows of lines 1-9 are in the table when a flush or a source transaction
// completed before line 10, and progress stops before it.
func TestConformanceReplicaIdentity(t *testing.T) {
	const rel = "debezium/debezium-postgres-data-replica-identity.txt"
	path := conformance(t, rel)
	peerMsg := expectedError(t, path+".expected-error.txt")
	tc := conformanceCase{format: "debezium-json", source: "inventory.products"}
	schema := readSchema(t, path+".schema.txt")
	fx := fixture{columns: schema, key: []string{"id"}}
	// Rows committed before the refusal: the whole run is one flush of
	// 1000 rows; flushes of 3 rows commit lines 1-9; so does transaction
	// mode, a record being a transaction.
	committed := map[string]string{"flush-3": "9", "flush-1000": "0", "transaction": "9"}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, fx.createTable(db.Dialect))
		for _, mode := range conformanceModes {
			t.Run(mode.name, func(t *testing.T) {
				db.Exec(t, "DELETE FROM "+conformanceTable)
				cfg := tc.config(db, []string{path})
				cfg.Name = "replica-identity-" + mode.name
				mode.set(cfg)
				// The count below is of flushes by size: a flush by time on
				// a slow machine would commit fewer lines.
				cfg.Sink.FlushInterval = time.Hour
				r := runPipeline(t, cfg)
				if r.err == nil {
					t.Fatal("run succeeded, want the replica identity error")
				}
				for _, w := range []string{filepath.Base(rel) + ":10", "inventory.products", peerMsg[:strings.Index(peerMsg, ",")], "REPLICA IDENTITY"} {
					if !strings.Contains(r.err.Error(), w) {
						t.Errorf("error %q lacks %q", r.err, w)
					}
				}
				if got := query(t, db, "SELECT COUNT(*) FROM "+conformanceTable); got != committed[mode.name] {
					t.Errorf("%s rows committed, want %s", got, committed[mode.name])
				}
				if got := query(t, db, fmt.Sprintf("SELECT COUNT(*) FROM txsink_progress WHERE pipeline = '%s' AND seq >= 10", cfg.Name)); got != "0" {
					t.Errorf("progress reached line 10 or later")
				}
			})
		}
	})
}

// expectedError returns the message of an .expected-error.txt: its one
// line that is not a comment.
func expectedError(t *testing.T, path string) string {
	t.Helper()
	msgs := commentedLines(t, path)
	if len(msgs) != 1 || !strings.Contains(msgs[0], ",") {
		t.Fatalf("%s: messages %q, want one of the form \"reason, hint\"", path, msgs)
	}
	return msgs[0]
}
