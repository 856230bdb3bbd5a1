package mysql_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/internal/fault"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/sink/sqlsink"
	"github.com/txsink/txsink/sink/sqlsink/mysql"
)

// statementsOnly is the dialect without its Loader: Apply writes every
// group with the multi-row statements, the reference the load path must
// match.
type statementsOnly struct{ sqlsink.Dialect }

// UniqueKeys is the dialect's: the reference frees the unique values a
// unit's rows exchange as the load path does.
func (s statementsOnly) UniqueKeys(ctx context.Context, q sqlsink.Querier, t *schema.Table) ([]schema.UniqueKey, error) {
	return s.Dialect.(sqlsink.UniqueKeyReader).UniqueKeys(ctx, q, t)
}

// ForeignKeys is the dialect's: the reference orders a unit's statements
// as the load path does.
func (s statementsOnly) ForeignKeys(ctx context.Context, q sqlsink.Querier, t *schema.Table) ([]schema.ForeignKey, error) {
	return s.Dialect.(sqlsink.ForeignKeyReader).ForeignKeys(ctx, q, t)
}

func openTarget(t testing.TB, url string) *sqlsink.DB {
	t.Helper()
	tdb, err := mysql.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tdb.Close() })
	return tdb
}

// loaderOn opens a target on url whose loader takes every group of two
// rows or more, sending each load as one query (multi) or as three
// statements, and describes tables in it.
func loaderOn(t *testing.T, url string, multi bool, tables ...string) (*sqlsink.DB, *mysql.Dialect, []*schema.Table) {
	t.Helper()
	tdb := openTarget(t, url)
	d := tdb.Dialect().(*mysql.Dialect)
	d.BulkMinRows = 1
	d.MultiStatements = multi
	var out []*schema.Table
	for _, name := range tables {
		tbl, err := tdb.Describe(context.Background(), schema.Name{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tbl)
	}
	return tdb, d, out
}

// bothTrips runs test with each of the loader's ways of sending a load:
// one query of savepoint, load and count (what Open sets up), and three
// statements (a Dialect from Detect, whose connections may not take
// several statements in one query).
func bothTrips(t *testing.T, test func(t *testing.T, multi bool)) {
	for _, multi := range []bool{true, false} {
		name := "one-query"
		if !multi {
			name = "three-statements"
		}
		t.Run(name, func(t *testing.T) { test(t, multi) })
	}
}

// pair is one private database written twice over: by the loader
// (BulkMinRows 1, so every group of two rows or more is offered) and by the
// statements alone. Each has its own database, so the two can be compared
// table by table after the same units.
type pair struct {
	load, stmt     *sqlsink.DB
	loadDB, stmtDB *testdb.DB
	d              *mysql.Dialect
}

func newPair(t *testing.T, multi bool, ddl ...string) *pair {
	t.Helper()
	p := &pair{loadDB: testdb.MySQL(t), stmtDB: testdb.MySQL(t)}
	p.loadDB.Exec(t, ddl...)
	p.stmtDB.Exec(t, ddl...)
	p.load = openTarget(t, p.loadDB.URL)
	p.d = p.load.Dialect().(*mysql.Dialect)
	p.d.BulkMinRows = 1
	p.d.MultiStatements = multi
	s := openTarget(t, p.stmtDB.URL)
	p.stmt = sqlsink.New(s.DB(), statementsOnly{s.Dialect()})
	return p
}

// apply builds a unit per side from build (which gets that side's table
// descriptions) and applies it to both; both must agree on success.
func (p *pair) apply(t *testing.T, build func(describe func(string) *schema.Table) *commit.Unit) {
	t.Helper()
	ctx := context.Background()
	for _, side := range []*sqlsink.DB{p.load, p.stmt} {
		describe := func(name string) *schema.Table {
			t.Helper()
			tbl, err := side.Describe(ctx, schema.Name{Name: name})
			if err != nil {
				t.Fatal(err)
			}
			return tbl
		}
		if err := side.Apply(ctx, build(describe)); err != nil {
			t.Fatalf("%s: %v", side.Dialect().Name(), err)
		}
	}
}

// same fails the test unless every named table holds the same rows on
// both sides.
func (p *pair) same(t *testing.T, tables ...string) {
	t.Helper()
	for _, tbl := range tables {
		got, want := dump(t, p.loadDB.SQL, tbl), dump(t, p.stmtDB.SQL, tbl)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("table %s differs from the statement path's:\nload:       %q\nstatements: %q", tbl, got, want)
		}
	}
}

// dump reads every row of tbl, in the order of all its columns, each value
// as the server's text ("<NULL>" for NULL) and with its hex, so bytes that
// differ show.
func dump(t *testing.T, db *sql.DB, tbl string) [][]string {
	t.Helper()
	rows, err := db.Query("SELECT * FROM `" + tbl + "` ORDER BY 1, 2")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = "<NULL>"
			if v.Valid {
				row[i] = fmt.Sprintf("%s|%x", v.String, v.String)
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func positions(n int) []changelog.Position {
	out := make([]changelog.Position, n)
	for i := range out {
		out[i] = changelog.Position{Partition: "p", Offset: int64(i + 1), Seq: int64(i + 1)}
	}
	return out
}

func upsertUnit(tbl *schema.Table, cols []string, rows [][]any) *commit.Unit {
	return &commit.Unit{Pipeline: "load", Batches: []*commit.Batch{{Table: tbl, Upserts: []commit.Group{{Columns: cols, Rows: rows, Pos: positions(len(rows))}}}}}
}

func insertUnit(tbl *schema.Table, cols []string, rows [][]any) *commit.Unit {
	return &commit.Unit{Pipeline: "load", Batches: []*commit.Batch{{Table: tbl, Inserts: []commit.Group{{Columns: cols, Rows: rows, Pos: positions(len(rows))}}}}}
}

// allTypesDDL has a column of every class the dialect binds.
const allTypesDDL = `CREATE TABLE %s (
	id BIGINT NOT NULL PRIMARY KEY,
	s VARCHAR(40) NULL, l VARCHAR(10) CHARACTER SET latin1 NULL, txt TEXT NULL, c CHAR(4) NULL,
	b BLOB NULL, vb VARBINARY(300) NULL, bn BINARY(4) NULL,
	dec1 DECIMAL(30,10) NULL, dec2 DECIMAL(5,2) NULL, u BIGINT UNSIGNED NULL, i TINYINT NULL, m MEDIUMINT NULL, y YEAR NULL,
	f FLOAT NULL, dbl DOUBLE NULL,
	dt DATETIME(6) NULL, dt0 DATETIME NULL, ts TIMESTAMP(3) NULL, d DATE NULL, tm TIME(6) NULL,
	j JSON NULL, e ENUM('a','b c') NULL)`

var allTypesCols = []string{"id", "s", "l", "txt", "c", "b", "vb", "bn", "dec1", "dec2", "u", "i", "m", "y", "f", "dbl", "dt", "dt0", "ts", "d", "tm", "j", "e"}

// allTypesRows returns n rows of converted values (what coerce returns and
// Bind passes on), cycling through awkward text, all 256 byte values,
// extreme numbers and date-times with and without fractions.
func allTypesRows(n, salt int) [][]any {
	texts := []any{"", "plain", "tab\there", "new\nline", `back\slash`, `\N`, "NULL", "nul\x00byte", "cr\r\nlf", "é李😀 multibyte", `\\t not a tab`, " trailing  ", nil}
	latin := []any{"café", "", "a\tb", nil}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	blobs := []any{all, []byte{}, []byte(`\N`), []byte{0, '\\', '\t', '\n', 0xff}, nil}
	decs := []any{"0", "-0.0000000001", "12345678901234567890.0123456789", "-99999999999999999999.9999999999", nil}
	times := []any{
		// time.Time{} is 0001-01-01 00:00:00, which the driver would send
		// as '0000-00-00'; Bind sends it as text.
		time.Time{},
		time.Date(2026, 11, 30, 23, 59, 59, 999999000, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 1000, time.UTC),
		time.Date(9999, 12, 31, 0, 0, 0, 1000, time.UTC), time.Date(2000, 2, 29, 12, 0, 0, 0, time.UTC), nil}
	var rows [][]any
	for k := 0; k < n; k++ {
		i := k + salt
		ts := time.Date(2038, 1, 19, 3, 14, 7, (i%1000)*1000000, time.UTC)
		if i%7 == 0 {
			ts = time.Date(1970, 1, 1, 0, 0, 1, 0, time.UTC)
		}
		rows = append(rows, []any{
			int64(k + 1), texts[i%len(texts)], latin[i%len(latin)], texts[(i+3)%len(texts)], []any{"ab", "", "abcd", nil}[i%4],
			blobs[i%len(blobs)], blobs[(i+1)%len(blobs)], []any{[]byte{1, 2}, []byte{0, 0, 0, 0}, nil}[i%3],
			decs[i%len(decs)], []any{"999.99", "-999.99", "0.05", nil}[i%4], []any{uint64(18446744073709551615), uint64(0), uint64(9223372036854775808), nil}[i%4],
			[]any{int64(-128), int64(127), int64(0)}[i%3], []any{int64(-8388608), int64(8388607)}[i%2], []any{int64(1901), int64(2155), nil}[i%3],
			[]any{float64(float32(0.1)), float64(float32(-3.4028235e38)), float64(float32(1.17549435e-38)), nil}[i%4],
			[]any{0.1, 1e300, -2.2250738585072014e-308, 5e-324, nil}[i%5],
			times[i%len(times)], []any{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), nil}[i%3], ts,
			[]any{"2026-01-02", "0001-01-01", "9999-12-31", nil}[i%4], []any{"-838:59:59", "838:59:59.999999", "00:00:00", "12:34:56.5", nil}[i%5],
			[]any{`{"k": "v\"q\\u00e9", "n": [1, 2.5, null]}`, `"tab\there"`, `[]`, nil}[i%4], []any{"a", "b c", nil}[i%3],
		})
	}
	return rows
}

// TestLoadRoundTrip writes every value type through the load path (REPLACE
// for upserts, plain LOAD DATA for inserts) and through the statements, and
// requires the same bytes in both tables: inserts of new rows, upserts
// over existing ones, and an append-only table.
func TestLoadRoundTrip(t *testing.T) { bothTrips(t, testLoadRoundTrip) }

func testLoadRoundTrip(t *testing.T, multi bool) {
	p := newPair(t, multi,
		fmt.Sprintf(allTypesDDL, "t"),
		strings.Replace(strings.Replace(fmt.Sprintf(allTypesDDL, "a"), "NOT NULL PRIMARY KEY", "NOT NULL", 1), "id BIGINT", "seq BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, id BIGINT", 1))
	p.apply(t, func(describe func(string) *schema.Table) *commit.Unit {
		return upsertUnit(describe("t"), allTypesCols, allTypesRows(60, 0))
	})
	p.same(t, "t")
	// Overwrite half of the rows with other values and add new ones.
	p.apply(t, func(describe func(string) *schema.Table) *commit.Unit {
		rows := allTypesRows(90, 5)[30:]
		return upsertUnit(describe("t"), allTypesCols, rows)
	})
	p.same(t, "t")
	p.apply(t, func(describe func(string) *schema.Table) *commit.Unit {
		return insertUnit(describe("a"), allTypesCols, allTypesRows(40, 2))
	})
	p.same(t, "a")
	counts := mysql.LoadCounts(p.d)
	if counts["replace"] != 2 || counts["insert"] != 1 || counts["rolled back"] != 0 || counts["declined"] != 0 {
		t.Errorf("load paths taken: %v; want 2 replace and 1 insert", counts)
	}
}

// TestLoadSemantics checks the path chosen for tables where REPLACE would
// not do what the upsert does, and that what each path leaves equals what
// the statements leave: children of a cascading foreign key survive, a
// trigger's audit is the upsert's, a second unique key, columns the group
// does not write, and keys that compare equal while they differ. Groups
// of new rows only may go in as plain inserts on such tables; a group
// touching an existing row must not.
func TestLoadSemantics(t *testing.T) { bothTrips(t, testLoadSemantics) }

func testLoadSemantics(t *testing.T, multi bool) {
	const (
		fkDDL     = "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10) NOT NULL)"
		childDDL  = "CREATE TABLE child (id INT PRIMARY KEY, pid INT NOT NULL, FOREIGN KEY (pid) REFERENCES t (id) ON DELETE CASCADE)"
		partDDL   = "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10) NOT NULL, kept VARCHAR(10) NOT NULL DEFAULT 'default')"
		uniqueDDL = "CREATE TABLE t (id INT PRIMARY KEY, email VARCHAR(20) NOT NULL, v INT, UNIQUE KEY (email))"
	)
	triggers := []string{"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10) NOT NULL)",
		"CREATE TABLE audit (n INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(40))",
		"CREATE TRIGGER t_del AFTER DELETE ON t FOR EACH ROW INSERT INTO audit (what) VALUES (CONCAT('delete ', OLD.id))",
		"CREATE TRIGGER t_upd AFTER UPDATE ON t FOR EACH ROW INSERT INTO audit (what) VALUES (CONCAT('update ', OLD.v, '>', NEW.v))",
		"CREATE TRIGGER t_ins AFTER INSERT ON t FOR EACH ROW INSERT INTO audit (what) VALUES (CONCAT('insert ', NEW.id))"}
	tests := []struct {
		name   string
		ddl    []string
		table  string
		cols   []string
		seed   [][]any // written first, by statements on both sides
		rows   [][]any // then upserted
		want   string  // the path that writes the group without staging ("declined": the statements; "none": not even staging)
		tried  bool    // whether a load as new rows is tried and rolled back first
		tables []string
	}{
		{
			name: "plain table: REPLACE", ddl: []string{"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10) NOT NULL, n INT NULL)"},
			table: "t", cols: []string{"id", "v", "n"},
			seed: [][]any{{int64(1), "old", int64(1)}, {int64(2), "old", int64(2)}},
			rows: [][]any{{int64(1), "new", nil}, {int64(3), "new", int64(3)}},
			want: "replace", tables: []string{"t"},
		},
		{
			name: "cascading foreign key", ddl: []string{fkDDL, childDDL, "INSERT INTO t VALUES (1, 'old'), (2, 'old')", "INSERT INTO child VALUES (10, 1), (20, 2)"},
			table: "t", cols: []string{"id", "v"},
			rows: [][]any{{int64(1), "new"}, {int64(2), "new"}, {int64(3), "new"}},
			want: "declined", tried: true, tables: []string{"t", "child"},
		},
		{
			name: "cascading foreign key, new rows only", ddl: []string{fkDDL, childDDL, "INSERT INTO t VALUES (1, 'old')", "INSERT INTO child VALUES (10, 1)"},
			table: "t", cols: []string{"id", "v"},
			rows: [][]any{{int64(2), "new"}, {int64(3), "new"}},
			want: "new", tables: []string{"t", "child"},
		},
		{
			name: "delete and update triggers", ddl: triggers,
			table: "t", cols: []string{"id", "v"},
			seed: [][]any{{int64(1), "old"}, {int64(2), "old"}},
			rows: [][]any{{int64(1), "new"}, {int64(3), "new"}, {int64(2), "new"}},
			want: "declined", tables: []string{"t", "audit"},
		},
		{
			name: "triggers, new rows only", ddl: triggers,
			table: "t", cols: []string{"id", "v"},
			rows: [][]any{{int64(3), "new"}, {int64(4), "new"}},
			want: "declined", tables: []string{"t", "audit"},
		},
		{
			name: "second unique key", ddl: []string{uniqueDDL},
			table: "t", cols: []string{"id", "email", "v"},
			seed: [][]any{{int64(1), "a@x", int64(1)}, {int64(2), "b@x", int64(2)}},
			// Row 3 takes row 2's email, which row 2 gives up: the unit
			// frees it first (row 2 deleted, its email being NOT NULL),
			// and the group is then one of new rows only. (A row taking
			// a value of a row the unit does not change is refused
			// before any path: sqlsink's TestUniqueKeyHolder.)
			rows: [][]any{{int64(4), "d@x", int64(40)}, {int64(3), "b@x", int64(30)}, {int64(2), "c@x", int64(20)}},
			want: "new", tables: []string{"t"},
		},
		{
			name: "second unique key, new rows only", ddl: []string{uniqueDDL},
			table: "t", cols: []string{"id", "email", "v"},
			seed: [][]any{{int64(1), "a@x", int64(1)}},
			rows: [][]any{{int64(4), "d@x", int64(40)}, {int64(3), "c@x", int64(30)}},
			want: "new", tables: []string{"t"},
		},
		{
			name: "columns the group does not write", ddl: []string{partDDL},
			table: "t", cols: []string{"id", "v"},
			seed: [][]any{{int64(1), "old"}, {int64(2), "old"}},
			rows: [][]any{{int64(1), "new"}, {int64(3), "new"}},
			want: "declined", tried: true, tables: []string{"t"},
		},
		{
			name: "columns the group does not write, new rows only", ddl: []string{partDDL},
			table: "t", cols: []string{"id", "v"},
			seed: [][]any{{int64(1), "old"}},
			rows: [][]any{{int64(2), "new"}, {int64(3), "new"}},
			want: "new", tables: []string{"t"},
		},
		{
			name: "case-insensitive text key", ddl: []string{"CREATE TABLE t (k VARCHAR(10) PRIMARY KEY, v INT) COLLATE utf8mb4_general_ci"},
			table: "t", cols: []string{"k", "v"},
			seed: [][]any{{"abc", int64(1)}, {"x ", int64(2)}},
			// Equal under the collation (case, trailing blanks): the upsert
			// sets the key to the new spelling; REPLACE is not used for it.
			rows: [][]any{{"ABC", int64(10)}, {"x", int64(20)}},
			want: "declined", tried: true, tables: []string{"t"},
		},
		{
			name: "binary no-pad text key: REPLACE", ddl: []string{"CREATE TABLE t (k VARCHAR(10) COLLATE utf8mb4_nopad_bin PRIMARY KEY, v INT)"},
			table: "t", cols: []string{"k", "v"},
			seed: [][]any{{"abc", int64(1)}, {"x ", int64(2)}},
			rows: [][]any{{"ABC", int64(10)}, {"x", int64(20)}, {"abc", int64(30)}},
			want: "replace", tables: []string{"t"},
		},
		{
			name: "generated column", ddl: []string{"CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL, twice INT AS (v * 2) STORED)"},
			table: "t", cols: []string{"id", "v"},
			seed: [][]any{{int64(1), int64(1)}},
			rows: [][]any{{int64(1), int64(5)}, {int64(2), int64(6)}},
			want: "replace", tables: []string{"t"},
		},
		{
			name: "not InnoDB", ddl: []string{"CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=MyISAM"},
			table: "t", cols: []string{"id", "v"},
			rows: [][]any{{int64(1), int64(5)}, {int64(2), int64(6)}},
			want: "none", tables: []string{"t"},
		},
	}
	for _, tc := range tests {
		for _, staging := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/staging=%v", tc.name, staging), func(t *testing.T) {
				p := newPair(t, multi, tc.ddl...)
				p.d.BulkStaging = staging
				ctx := context.Background()
				if tc.seed != nil {
					for _, side := range []*sqlsink.DB{p.load, p.stmt} {
						tbl, err := side.Describe(ctx, schema.Name{Name: tc.table})
						if err != nil {
							t.Fatal(err)
						}
						if err := sqlsink.New(side.DB(), statementsOnly{side.Dialect()}).Apply(ctx, upsertUnit(tbl, tc.cols, tc.seed)); err != nil {
							t.Fatal(err)
						}
					}
				}
				p.apply(t, func(describe func(string) *schema.Table) *commit.Unit {
					return upsertUnit(describe(tc.table), tc.cols, tc.rows)
				})
				p.same(t, tc.tables...)
				want := map[string]int64{}
				switch {
				case tc.want == "none":
					want["declined"] = 1 // whatever the paths allowed
				case tc.want == "declined" && staging:
					want["stage"] = 1
				default:
					want[tc.want] = 1
				}
				if tc.tried {
					want["rolled back"] = 1
				}
				got := mysql.LoadCounts(p.d)
				for path, n := range got {
					if n != want[path] {
						t.Errorf("load paths taken: %v; want %v", got, want)
						break
					}
				}
			})
		}
	}
}

// TestLoadNewBackoff follows the attempts to load upserts as new rows on a
// table where REPLACE is not exact: after a miss the next group is not
// tried, after a second miss the next two are not, and a success tries
// every group again.
func TestLoadNewBackoff(t *testing.T) {
	db := testdb.MySQL(t)
	db.Exec(t, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10) NOT NULL, kept INT NOT NULL DEFAULT 0)",
		"INSERT INTO t (id, v) VALUES (1, 'old'), (2, 'old')")
	tdb, d, tables := loaderOn(t, db.URL, true, "t")
	tbl, ctx := tables[0], context.Background()
	next := int64(100)
	steps := []struct {
		existing bool   // the group updates rows 1 and 2, else writes two new rows
		want     string // "miss": tried and rolled back, "skip": not tried, "new": loaded
	}{{true, "miss"}, {true, "skip"}, {true, "miss"}, {true, "skip"}, {true, "skip"}, {false, "new"}, {false, "new"}, {true, "miss"}, {true, "skip"}}
	for i, st := range steps {
		before := mysql.LoadCounts(d)
		rows := [][]any{{int64(1), fmt.Sprint("v", i)}, {int64(2), fmt.Sprint("v", i)}}
		if !st.existing {
			rows = [][]any{{next, "new"}, {next + 1, "new"}}
			next += 2
		}
		if err := tdb.Apply(ctx, upsertUnit(tbl, []string{"id", "v"}, rows)); err != nil {
			t.Fatal(err)
		}
		after := mysql.LoadCounts(d)
		got := "skip"
		switch {
		case after["new"] > before["new"]:
			got = "new"
		case after["rolled back"] > before["rolled back"]:
			got = "miss"
		}
		if got != st.want {
			t.Errorf("group %d: %s, want %s (counts %v)", i+1, got, st.want, after)
		}
	}
	var v string
	if err := db.SQL.QueryRow("SELECT v FROM t WHERE id = 2").Scan(&v); err != nil || v != fmt.Sprint("v", len(steps)-1) {
		t.Errorf("row 2: v = %q (err %v), want the last group's", v, err)
	}
}

// TestLoadBadInput sends values the server must refuse through each load
// path: REPLACE, the staging table, and a plain LOAD DATA into an
// append-only table, where LOCAL turns refusals into warnings and skipped
// rows. Each unit must fail as it does on the statement path — same error,
// same row key and position — and leave nothing behind.
func TestLoadBadInput(t *testing.T) { bothTrips(t, testLoadBadInput) }

func testLoadBadInput(t *testing.T, multi bool) {
	const cols = `id INT NOT NULL, s VARCHAR(5) NULL, i TINYINT NULL, d DECIMAL(5,2) NULL,
		nn VARCHAR(10) NOT NULL DEFAULT 'x', l VARCHAR(5) CHARACTER SET latin1 NULL, tt TINYTEXT NULL, j JSON NULL, dt DATETIME(6) NULL`
	ddl := []string{
		"CREATE TABLE rep (" + cols + ", PRIMARY KEY (id))",
		// A column the group does not write: REPLACE is out, staging in.
		"CREATE TABLE stg (" + cols + ", extra INT NOT NULL DEFAULT 7, PRIMARY KEY (id))",
		// Append-only, with a unique key a duplicate can hit.
		"CREATE TABLE app (" + cols + ", UNIQUE KEY (id))",
	}
	names := []string{"id", "s", "i", "d", "nn", "l", "tt", "j", "dt"}
	tests := []struct {
		name    string
		bad     []any // row 3 of 5
		wantErr string
		paths   []string // default: all three tables
	}{
		{name: "string too long", bad: []any{int64(3), "toolong", int64(1), "1.00", "nn", nil, nil, nil, nil}, wantErr: "Data too long"},
		{name: "int out of range", bad: []any{int64(3), "ok", int64(300), "1.00", "nn", nil, nil, nil, nil}, wantErr: "Out of range"},
		{name: "decimal out of range", bad: []any{int64(3), "ok", int64(1), "12345.6", "nn", nil, nil, nil, nil}, wantErr: "Out of range"},
		{name: "not a decimal", bad: []any{int64(3), "ok", int64(1), "1,5", "nn", nil, nil, nil, nil}, wantErr: "Data truncated"},
		{name: "NULL into NOT NULL", bad: []any{int64(3), "ok", int64(1), "1.00", nil, nil, nil, nil, nil}, wantErr: "cannot be null"},
		{name: "character the column's charset lacks", bad: []any{int64(3), "ok", int64(1), "1.00", "nn", "李", nil, nil, nil}, wantErr: "Incorrect string value"},
		{name: "TINYTEXT over 255 bytes", bad: []any{int64(3), "ok", int64(1), "1.00", "nn", nil, strings.Repeat("é", 200), nil, nil}, wantErr: "Incorrect string value"},
		{name: "invalid JSON", bad: []any{int64(3), "ok", int64(1), "1.00", "nn", nil, nil, "{nope", nil}, wantErr: "CONSTRAINT"},
		{name: "year past 9999", bad: []any{int64(3), "ok", int64(1), "1.00", "nn", nil, nil, nil, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, wantErr: "year"},
		{name: "value of a type with no text form", bad: []any{int64(3), "ok", int64(1), "1.00", "nn", nil, nil, nil, struct{}{}}, wantErr: "struct"},
		{name: "duplicate key on an append-only table", bad: []any{int64(1), "dup", nil, nil, "nn", nil, nil, nil, nil}, wantErr: "Duplicate entry", paths: []string{"app"}},
	}
	for _, tc := range tests {
		paths := tc.paths
		if paths == nil {
			paths = []string{"rep", "stg", "app"}
		}
		for _, name := range paths {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				db := testdb.MySQL(t)
				db.Exec(t, ddl...)
				db.Exec(t, "INSERT INTO "+name+" (id, nn) VALUES (1, 'seed')")
				tdb, d, tables := loaderOn(t, db.URL, multi, name)
				d.BulkStaging = true
				stmt := sqlsink.New(tdb.DB(), statementsOnly{d})
				tbl, ctx := tables[0], context.Background()
				var rows [][]any
				for i := 1; i <= 5; i++ {
					row := []any{int64(i + 10), "ok", int64(1), "1.50", "nn", "l", "t", "{}", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
					if i == 3 {
						row = tc.bad
					}
					rows = append(rows, row)
				}
				unit := upsertUnit(tbl, names, rows)
				if name == "app" {
					unit = insertUnit(tbl, names, rows)
				}
				want := stmt.Apply(ctx, unit)
				if want == nil {
					t.Fatal("the statement path accepted the bad row")
				}
				got := tdb.Apply(ctx, unit)
				var te, we *sink.Error
				if !errors.As(got, &te) || !errors.As(want, &we) {
					t.Fatalf("load path: %v; statement path: %v; want *sink.Error from both", got, want)
				}
				if got.Error() != want.Error() || te.Key != we.Key || te.Pos != we.Pos || te.Transient {
					t.Errorf("load path error:\n  %v (key %s at %s)\nstatement path error:\n  %v (key %s at %s)", got, te.Key, te.Pos, want, we.Key, we.Pos)
				}
				if te.Pos != "p:3" || !strings.Contains(got.Error(), tc.wantErr) {
					t.Errorf("error %q: want the row at p:3 named and %q", got, tc.wantErr)
				}
				var n int
				if err := db.SQL.QueryRow("SELECT COUNT(*) FROM " + name).Scan(&n); err != nil || n != 1 {
					t.Errorf("a failed unit left %d rows (err %v); want only the seeded one", n, err)
				}
				if counts := mysql.LoadCounts(d); counts["rolled back"] == 0 || counts["declined"] != 1 {
					t.Errorf("load paths taken: %v; want the load tried, rolled back and declined", counts)
				}
			})
		}
	}
}

// TestLoadRollback proves a load is part of the unit's transaction: when
// a later statement of the unit fails, or COMMIT is refused, nothing the
// load wrote remains, and progress has not moved.
func TestLoadRollback(t *testing.T) { bothTrips(t, testLoadRollback) }

func testLoadRollback(t *testing.T, multi bool) {
	db := testdb.MySQL(t)
	db.Exec(t, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10) NOT NULL)", "CREATE TABLE u (id INT PRIMARY KEY, v VARCHAR(2) NOT NULL)")
	tdb, d, tables := loaderOn(t, db.URL, multi, "t", "u")
	tt, ut, ctx := tables[0], tables[1], context.Background()
	if err := tdb.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	var rows [][]any
	for i := 1; i <= 500; i++ {
		rows = append(rows, []any{int64(i), "v"})
	}
	progress := []changelog.Position{{Partition: "p", Offset: 500}}
	tests := []struct {
		name string
		unit *commit.Unit
		hook func(*commit.Unit) error
	}{
		{"a later statement fails", &commit.Unit{Pipeline: "rb", Progress: progress, Batches: []*commit.Batch{
			{Table: tt, Upserts: []commit.Group{{Columns: []string{"id", "v"}, Rows: rows, Pos: positions(len(rows))}}},
			{Table: ut, Upserts: []commit.Group{{Columns: []string{"id", "v"}, Rows: [][]any{{int64(1), "too long"}}, Pos: positions(1)}}},
		}}, nil},
		{"commit refused", upsertUnit(tt, []string{"id", "v"}, rows), func(*commit.Unit) error { return errors.New("refused before commit") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.unit.Pipeline, tc.unit.Progress = "rb", progress
			before := mysql.LoadCounts(d)["replace"]
			if err := tdb.Apply(fault.With(ctx, &fault.Hooks{BeforeCommit: tc.hook}), tc.unit); err == nil {
				t.Fatal("the unit succeeded")
			}
			if mysql.LoadCounts(d)["replace"] != before+1 {
				t.Fatalf("the group did not take the load path: %v", mysql.LoadCounts(d))
			}
			var n int
			if err := db.SQL.QueryRow("SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != 0 {
				t.Errorf("a rolled-back unit left %d loaded rows (err %v)", n, err)
			}
			got, err := tdb.Progress(ctx, "rb")
			if err != nil {
				t.Fatal(err)
			}
			if got["p"].Offset != 0 {
				t.Errorf("progress moved to %d", got["p"].Offset)
			}
		})
	}
}

// simpleTable returns a private database with a table t (id, v) and its
// URL, for tests that connect to it in their own way.
func simpleTable(t *testing.T) (*testdb.DB, *url.URL) {
	t.Helper()
	db := testdb.MySQL(t)
	db.Exec(t, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10) NOT NULL)")
	u, err := url.Parse(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	return db, u
}

// TestLoadRefused connects through a proxy that takes the LOCAL INFILE
// capability out of the client's handshake, so the real server refuses
// LOAD DATA LOCAL as it does with local_infile=OFF. Units must still
// commit (by statements), the loader must notice once and stop trying.
func TestLoadRefused(t *testing.T) { bothTrips(t, testLoadRefused) }

func testLoadRefused(t *testing.T, multi bool) {
	db, u := simpleTable(t)
	u.Host = noLocalInfileProxy(t, u.Host)
	tdb, d, tables := loaderOn(t, u.String(), multi, "t")
	upsertRounds(t, tdb, db, tables[0], 3, 100)
	if off := mysql.LoadOff(d); !strings.Contains(off, "refused") {
		t.Errorf("LoadOff = %q, want the refusal", off)
	}
	if counts := mysql.LoadCounts(d); counts["rolled back"] != 1 || counts["replace"] != 0 {
		t.Errorf("load paths taken: %v; want one refused attempt, then none", counts)
	}
}

// TestLoadOneQueryRefused gives the loader connections that take one
// statement per query (no multiStatements, as behind some proxies): the
// first load's query fails at its SAVEPOINT, so it and every later one go
// as three statements, and nothing fails.
func TestLoadOneQueryRefused(t *testing.T) {
	db, _ := simpleTable(t)
	dsn, err := mysql.DSN(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	one := strings.Replace(dsn, "multiStatements=true", "multiStatements=false", 1)
	if one == dsn {
		t.Fatalf("DSN %q does not turn multiStatements on", dsn)
	}
	sdb, err := sql.Open("mysql", one)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sdb.Close() })
	ctx := context.Background()
	d, err := mysql.Detect(ctx, sdb)
	if err != nil {
		t.Fatal(err)
	}
	d.MultiStatements, d.BulkMinRows = true, 1
	tdb := sqlsink.New(sdb, d)
	tbl, err := tdb.Describe(ctx, schema.Name{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	upsertRounds(t, tdb, db, tbl, 2, 50)
	if !mysql.OneQueryOff(d) {
		t.Error("the loader still sends one query per load")
	}
	if counts := mysql.LoadCounts(d); counts["replace"] != 2 || counts["rolled back"] != 0 || counts["declined"] != 0 {
		t.Errorf("load paths taken: %v; want both groups loaded with REPLACE", counts)
	}
}

// upsertRounds applies rounds units of per new rows (id, "v") to table t
// through tdb, and checks that db's t then holds all of them.
func upsertRounds(t *testing.T, tdb *sqlsink.DB, db *testdb.DB, tbl *schema.Table, rounds, per int) {
	t.Helper()
	ctx := context.Background()
	for round := 0; round < rounds; round++ {
		var rows [][]any
		for i := 1; i <= per; i++ {
			rows = append(rows, []any{int64(round*per + i), "v"})
		}
		if err := tdb.Apply(ctx, upsertUnit(tbl, []string{"id", "v"}, rows)); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	var n int
	if err := db.SQL.QueryRow("SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != rounds*per {
		t.Errorf("%d rows (err %v), want %d", n, err, rounds*per)
	}
}

// noLocalInfileProxy relays TCP connections to addr, clearing the
// CLIENT_LOCAL_FILES capability bit in each client's handshake response.
func noLocalInfileProxy(t *testing.T, addr string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", addr)
			if err != nil {
				c.Close()
				continue
			}
			wg.Add(2)
			go func() {
				defer wg.Done()
				io.Copy(c, s)
				c.Close()
			}()
			go func() {
				defer wg.Done()
				defer s.Close()
				// The first client packet is the handshake response:
				// 3-byte length, sequence, then the capability flags,
				// little-endian; CLIENT_LOCAL_FILES is 0x80.
				head := make([]byte, 5)
				if _, err := io.ReadFull(c, head); err != nil {
					return
				}
				head[4] &^= 0x80
				if _, err := s.Write(head); err != nil {
					return
				}
				io.Copy(s, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// TestBulkLoadURL reads the bulk-load URL parameter.
func TestBulkLoadURL(t *testing.T) {
	db, u := simpleTable(t)
	q := u.Query()
	q.Set("bulk-load", "off")
	u.RawQuery = q.Encode()
	tdb, d, tables := loaderOn(t, u.String(), true, "t")
	if !d.NoBulkLoad {
		t.Fatal("bulk-load=off did not turn the loader off")
	}
	tbl, ctx := tables[0], context.Background()
	if err := tdb.Apply(ctx, upsertUnit(tbl, []string{"id", "v"}, [][]any{{int64(1), "a"}, {int64(2), "b"}})); err != nil {
		t.Fatal(err)
	}
	if counts := mysql.LoadCounts(d); counts["replace"] != 0 {
		t.Errorf("bulk-load=off loaded: %v", counts)
	}
	var n int
	if err := db.SQL.QueryRow("SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != 2 {
		t.Errorf("%d rows (err %v), want the 2 the statements wrote", n, err)
	}
	q.Set("bulk-load", "maybe")
	u.RawQuery = q.Encode()
	if _, err := mysql.Open(ctx, u.String()); err == nil || !strings.Contains(err.Error(), "bulk-load") {
		t.Errorf("bulk-load=maybe: err %v, want it refused", err)
	}
}

// TestRowReader checks the text LOAD DATA reads, whatever size the
// driver's reads are.
func TestRowReader(t *testing.T) {
	rows := [][]any{
		{int64(-1), uint64(18446744073709551615), "a\tb\nc\\d\re\x00f", []byte{0, 0xff, '\\'}, nil, 1.5, true, int32(7)},
		{time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 120000000, time.FixedZone("x", 3600)), time.Date(9, 1, 1, 0, 0, 0, 1, time.UTC), "", `\N`, json("[1]"), float64(float32(0.1)), false},
	}
	want := "-1\t18446744073709551615\ta\\tb\\nc\\\\d\\re\\0f\t\\0\xff\\\\\t\\N\t1.5\t1\t7\n" +
		"2026-01-02\t2026-01-02 02:04:05.12\t0009-01-01 00:00:00.000000001\t\t\\\\N\t[1]\t0.10000000149011612\t0\n"
	for _, size := range []int{1, 3, 16, 16 << 10} {
		got, err := readAll(mysql.NewRowReader(rows), size)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("reads of %d bytes:\n got %q\nwant %q", size, got, want)
		}
	}
	// A row that cannot be encoded ends the text before it, whole rows
	// only, and the reader says which row it was.
	bad := [][]any{{int64(1), "a"}, {int64(2), struct{}{}}, {int64(3), "c"}}
	for _, size := range []int{1, 64} {
		r := mysql.NewRowReader(bad)
		got, err := readAll(r, size)
		if err != nil || got != "1\ta\n" {
			t.Errorf("reads of %d bytes: %q, %v; want only the first row", size, got, err)
		}
		if err := mysql.RowReaderErr(r); err == nil || !strings.Contains(err.Error(), "row 2") {
			t.Errorf("reads of %d bytes: reader error %v, want row 2 named", size, err)
		}
	}
}

type json []byte

func readAll(r io.Reader, size int) (string, error) {
	var out bytes.Buffer
	buf := make([]byte, size)
	for {
		n, err := r.Read(buf)
		out.Write(buf[:n])
		if err == io.EOF {
			return out.String(), nil
		}
		if err != nil {
			return "", err
		}
	}
}
