package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/internal/fault"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/sink/sqlsink"
	"github.com/txsink/txsink/sink/sqlsink/postgres"
)

// plain hides the dialect's array statements and bulk path, so a target
// over it writes with the multi-row VALUES statements only: the reference
// the bulk path must match value for value.
type plain struct{ sqlsink.Dialect }

// loadTargets returns two targets over one private schema: one with the
// dialect as it is, whose groups of two rows or more take the bulk path by
// s, and one that writes with statements only.
func loadTargets(t *testing.T, s postgres.Strategy) (db *testdb.DB, load, stmt *sqlsink.DB) {
	t.Helper()
	db = testdb.Postgres(t)
	load, err := postgres.Open(context.Background(), db.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { load.Close() })
	postgres.SetLoad(t, 2, s)
	return db, load, sqlsink.New(load.DB(), plain{load.Dialect()})
}

func describe(t *testing.T, tdb *sqlsink.DB, name string) *schema.Table {
	t.Helper()
	tbl, err := tdb.Describe(context.Background(), schema.Name{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func apply(t *testing.T, tdb *sqlsink.DB, u *commit.Unit) {
	t.Helper()
	if err := tdb.Apply(context.Background(), u); err != nil {
		t.Fatal(err)
	}
}

// dump returns every row of table as PostgreSQL's text form of the whole
// row, in key order: equal dumps mean equal values, column by column.
func dump(t *testing.T, db *testdb.DB, table string) []string {
	t.Helper()
	return queryStrings(t, db, `SELECT x::text FROM `+table+` x ORDER BY 1`)
}

// queryStrings returns the one column of text q's rows hold, in order.
func queryStrings(t *testing.T, db *testdb.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.SQL.Query(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameRows(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("bulk path wrote %d rows, statements %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("row %d differs:\n bulk       %s\n statements %s", i, got[i], want[i])
		}
	}
}

// strategies are the upsert strategies, by name.
var strategies = []struct {
	name     string
	strategy postgres.Strategy
}{{"direct", postgres.DirectOnly}, {"staged", postgres.StagedOnly}, {"adaptive", postgres.Adaptive}}

// copyPaths are the ways a group goes through COPY: into a table without
// a key, and an upsert direct or staged.
var copyPaths = []struct {
	name     string
	strategy postgres.Strategy
	noKey    bool
}{{"insert", postgres.Adaptive, true}, {"direct", postgres.DirectOnly, false}, {"staged", postgres.StagedOnly, false}}

// keyClause is the id column's PRIMARY KEY clause, or nothing for an
// append-only table.
func keyClause(noKey bool) string {
	if noKey {
		return ""
	}
	return " PRIMARY KEY"
}

// batch returns g as tbl's batch: its upserts, or its inserts when tbl is
// append-only.
func batch(tbl *schema.Table, g commit.Group, noKey bool) *commit.Batch {
	if noKey {
		return &commit.Batch{Table: tbl, Inserts: []commit.Group{g}}
	}
	return &commit.Batch{Table: tbl, Upserts: []commit.Group{g}}
}

// counts snapshots postgres.LoadCounts; delta returns the change since.
type counts struct{ direct, staged, retried int64 }

func loadCounts() counts {
	d, s, r := postgres.LoadCounts()
	return counts{d, s, r}
}

func (c counts) delta() counts {
	n := loadCounts()
	return counts{n.direct - c.direct, n.staged - c.staged, n.retried - c.retried}
}

const richColumns = `s VARCHAR(40), t TEXT, c CHAR(5), b BYTEA, n NUMERIC(60,30), nu NUMERIC,
	ts TIMESTAMP(6), tz TIMESTAMPTZ(6), d DATE, tm TIME(6), j JSONB, js JSON,
	i2 SMALLINT, i4 INTEGER, i8 BIGINT, f4 REAL, f8 DOUBLE PRECISION, ok BOOLEAN,
	u UUID, ia INTEGER[], ta TEXT[]`

var richNames = strings.Fields("id s t c b n nu ts tz d tm j js i2 i4 i8 f4 f8 ok u ia ta")

// richRows returns rows first..last of every type the bulk path sends,
// with the values COPY's text format must escape or could misread;
// variant changes every non-key value.
func richRows(first, last, variant int) [][]any {
	texts := []string{"", "NULL", `\N`, `\.`, "a\tb\nc\rd\\e", "é李🙂 ü", " sp ", `"q" {x,y}`, "\x01\x7f", "line\r\n"}
	floats := []float64{math.MaxFloat64, 5e-324, math.Copysign(0, -1), 1.0 / 3, -2.5e-300}
	var rows [][]any
	for i := first; i <= last; i++ {
		text := texts[(i+variant)%len(texts)]
		row := []any{
			int64(i),
			text,
			strings.Repeat(text, 3) + strconv.Itoa(variant),
			[]string{"ab", "abcde", ""}[i%3],
			[]byte{0, '\t', '\n', '\\', 0xff, byte(i), byte(variant)},
			fmt.Sprintf("-%029d.%030d", i*variant+1, i),
			"1" + strings.Repeat("0", 100) + "." + strings.Repeat("9", 50) + strconv.Itoa(i*variant),
			time.Date(2026, 1, 2, 3, 4, 5, i*1000, time.UTC).Add(time.Duration(variant) * time.Hour),
			time.Date(1999, 12, 31, 23, 59, 59, 999999000, time.FixedZone("x", 5*3600)).Add(time.Duration(i*variant) * time.Second),
			any("2024-02-29"),
			fmt.Sprintf("%02d:%02d:%02d.%06d", i%24, variant%60, i%60, i*7%1000000),
			fmt.Sprintf(`{"k": "v\"q\\n\\t", "u": "é李", "n": 1.50, "i": %d}`, i*variant),
			fmt.Sprintf("{ \"a\" : [1, 2],\n\t\"b\": \"x\\\\y\", \"i\": %d }", i*variant),
			[]int64{-32768, 32767, 0}[i%3],
			int64(math.MinInt32 + i*variant),
			[]int64{math.MaxInt64 - int64(i), math.MinInt64 + int64(variant)}[i%2],
			float64(float32(0.1) * float32(i*variant)),
			floats[(i+variant)%len(floats)],
			(i+variant)%2 == 0,
			fmt.Sprintf("%08x-0000-4000-8000-%012x", i, variant),
			"{1,2,NULL}",
			`{"a b","c\"d",NULL,"\\"}`,
		}
		if i%2 == 0 {
			row[9] = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i*variant)
		}
		switch i % 11 {
		case 0: // NULL in every nullable column
			for c := 1; c < len(row); c++ {
				row[c] = nil
			}
		case 5:
			row[4] = []byte{}
		}
		rows = append(rows, row)
	}
	return rows
}

// TestLoadMatchesStatements writes groups of every type through the bulk
// path and the same groups through statements only, into twin tables, and
// requires the two tables to be equal row by row: appends, upserts of new
// keys and upserts over existing rows, by each upsert strategy.
func TestLoadMatchesStatements(t *testing.T) {
	tests := []struct {
		name     string
		strategy postgres.Strategy
		noKey    bool // an append-only table: the group is an insert
		existing bool // some keys exist before the upsert
		want     counts
	}{
		{name: "insert", noKey: true, want: counts{direct: 1}},
		{name: "direct/new keys", strategy: postgres.DirectOnly, want: counts{direct: 1}},
		{name: "staged/new keys", strategy: postgres.StagedOnly, want: counts{staged: 1}},
		{name: "direct/existing keys", strategy: postgres.DirectOnly, existing: true, want: counts{direct: 1, staged: 1, retried: 1}},
		{name: "staged/existing keys", strategy: postgres.StagedOnly, existing: true, want: counts{staged: 1}},
		{name: "adaptive/existing keys", strategy: postgres.Adaptive, existing: true, want: counts{direct: 1, staged: 1, retried: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db, load, stmt := loadTargets(t, tc.strategy)
			for _, name := range []string{"l", "s"} {
				db.Exec(t, "CREATE TABLE "+name+" (id BIGINT"+keyClause(tc.noKey)+", "+richColumns+")")
			}
			lt, st := describe(t, load, "l"), describe(t, stmt, "s")
			unit := func(tbl *schema.Table, rows [][]any) *commit.Unit {
				g := commit.Group{Columns: richNames, Rows: rows, Pos: positions(len(rows))}
				return &commit.Unit{Pipeline: "load", Batches: []*commit.Batch{batch(tbl, g, tc.noKey)}}
			}
			if tc.existing {
				seed := richRows(150, 420, 1)
				apply(t, stmt, unit(lt, seed))
				apply(t, stmt, unit(st, seed))
			}
			rows := richRows(1, 300, 2)
			before := loadCounts()
			apply(t, load, unit(lt, rows))
			if got := before.delta(); got != tc.want {
				t.Errorf("paths taken (direct, staged, retried) = %v, want %v", got, tc.want)
			}
			apply(t, stmt, unit(st, rows))
			sameRows(t, dump(t, db, "l"), dump(t, db, "s"))
		})
	}
}

// TestLoadGroups writes several groups of one table in one unit: column
// sets that leave other columns alone, one column set twice (the staging
// table is emptied between uses in one transaction), a group of key
// columns only (DO NOTHING), and CHAR keys that match blank-padded rows.
func TestLoadGroups(t *testing.T) {
	for _, s := range strategies {
		t.Run(s.name, func(t *testing.T) {
			db, load, stmt := loadTargets(t, s.strategy)
			for _, name := range []string{"l", "s"} {
				db.Exec(t, "CREATE TABLE "+name+" (a INT, c CHAR(3), v TEXT, w TEXT DEFAULT 'dflt', PRIMARY KEY (a, c))")
			}
			rows := func(first, last int, vals ...string) [][]any {
				var out [][]any
				for i := first; i <= last; i++ {
					r := []any{int64(i), "ab"}
					for _, v := range vals {
						r = append(r, v+strconv.Itoa(i))
					}
					out = append(out, r)
				}
				return out
			}
			group := func(cols string, rs [][]any) commit.Group {
				return commit.Group{Columns: strings.Fields(cols), Rows: rs, Pos: positions(len(rs))}
			}
			for i, tdb := range []*sqlsink.DB{load, stmt} {
				tbl := describe(t, tdb, []string{"l", "s"}[i])
				apply(t, stmt, &commit.Unit{Pipeline: "load", Batches: []*commit.Batch{
					{Table: tbl, Upserts: []commit.Group{group("a c v w", rows(1, 50, "old", "keep"))}},
				}})
				// Each unit twice: the second time every key exists.
				for range 2 {
					apply(t, tdb, &commit.Unit{Pipeline: "load", Batches: []*commit.Batch{{Table: tbl, Upserts: []commit.Group{
						group("a c v", rows(1, 100, "new1")),
						group("a c w", rows(80, 150, "new2")),
						group("a c v", rows(90, 120, "new3")),
						group("a c", rows(140, 160)),
					}}}})
				}
			}
			sameRows(t, dump(t, db, "l"), dump(t, db, "s"))
		})
	}
}

// TestLoadRollsBackWithUnit fails units after their groups were loaded and
// requires that nothing of them is visible: COPY runs inside the unit's
// transaction. The next unit, on the same connection, must then succeed
// although the staging table it created went with the rollback.
func TestLoadRollsBackWithUnit(t *testing.T) {
	for _, tc := range copyPaths {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db, load, _ := loadTargets(t, tc.strategy)
			load.DB().SetMaxOpenConns(1)
			db.Exec(t, "CREATE TABLE l (id BIGINT"+keyClause(tc.noKey)+", v TEXT)")
			if err := load.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			tbl := describe(t, load, "l")
			var rs [][]any
			for i := 1; i <= 500; i++ {
				rs = append(rs, []any{int64(i), "v" + strconv.Itoa(i)})
			}
			g := commit.Group{Columns: []string{"id", "v"}, Rows: rs, Pos: positions(len(rs))}
			u := &commit.Unit{Pipeline: "load", Batches: []*commit.Batch{batch(tbl, g, tc.noKey)}, Progress: []changelog.Position{{Partition: "p", Offset: 500, Seq: 500}}}
			stop := errors.New("stop before commit")
			before := loadCounts()
			if err := load.Apply(fault.With(ctx, &fault.Hooks{BeforeCommit: func(*commit.Unit) error { return stop }}), u); !errors.Is(err, stop) {
				t.Fatalf("Apply = %v, want the before-commit error", err)
			}
			if d := before.delta(); d.direct+d.staged != 1 {
				t.Fatalf("the group did not take the bulk path: %+v", d)
			}
			count := func() (rows int, pos int64) {
				t.Helper()
				if err := db.SQL.QueryRow(`SELECT (SELECT COUNT(*) FROM l), (SELECT position FROM txsink_progress WHERE pipeline = 'load')`).Scan(&rows, &pos); err != nil {
					t.Fatal(err)
				}
				return rows, pos
			}
			if n, pos := count(); n != 0 || pos != 0 {
				t.Fatalf("after the rollback: %d rows, position %d; want none and 0", n, pos)
			}
			apply(t, load, u)
			if n, pos := count(); n != 500 || pos != 500 {
				t.Fatalf("after the commit: %d rows, position %d; want 500 and 500", n, pos)
			}
		})
	}
}

// TestLoadRefusedRow loads groups with one value the server refuses (out
// of range, NOT NULL, CHECK, too long, a NUL byte in text): the unit fails
// for good, the replay names the row's key and position, and nothing is
// committed.
func TestLoadRefusedRow(t *testing.T) {
	bad := []struct {
		name string
		row  []any // id, v, n, q
	}{
		{"too long", []any{"toolong", int64(1), int64(1)}},
		{"not null", []any{nil, int64(1), int64(1)}},
		{"out of range", []any{"ok", int64(40000), int64(1)}},
		{"check", []any{"ok", int64(1), int64(-1)}},
		{"nul byte", []any{"a\x00b", int64(1), int64(1)}},
	}
	for _, p := range copyPaths {
		t.Run(p.name, func(t *testing.T) {
			db, load, _ := loadTargets(t, p.strategy)
			db.Exec(t, "CREATE TABLE r (id BIGINT"+keyClause(p.noKey)+", v VARCHAR(5) NOT NULL, n SMALLINT, q INT CHECK (q > 0))")
			tbl := describe(t, load, "r")
			for _, tc := range bad {
				t.Run(tc.name, func(t *testing.T) {
					var rs [][]any
					for i := 1; i <= 300; i++ {
						rs = append(rs, []any{int64(i), "ok", int64(i), int64(i)})
					}
					rs[150] = append([]any{int64(151)}, tc.row...)
					g := commit.Group{Columns: []string{"id", "v", "n", "q"}, Rows: rs, Pos: positions(len(rs))}
					b := batch(tbl, g, p.noKey)
					before := loadCounts()
					err := load.Apply(context.Background(), &commit.Unit{Pipeline: "load", Batches: []*commit.Batch{b}})
					var te *sink.Error
					if !errors.As(err, &te) || te.Pos != "p:151" || te.Transient || (!p.noKey && te.Key != "(151)") {
						t.Fatalf("Apply = %v; want the row with key (151) at p:151 named, not transient", err)
					}
					if d := before.delta(); d.direct+d.staged == 0 {
						t.Errorf("the group did not take the bulk path: %+v", d)
					}
					var n int
					if err := db.SQL.QueryRow(`SELECT COUNT(*) FROM r`).Scan(&n); err != nil || n != 0 {
						t.Errorf("a failed unit left %d rows (%v)", n, err)
					}
				})
			}
		})
	}
}

// TestLoadConnectionLost kills the server session in the middle of a load
// (a trigger terminates its own backend at one row): the error must be
// transient, and once the trigger is gone the retried unit must succeed on
// a new session, which creates its own staging table.
func TestLoadConnectionLost(t *testing.T) {
	for _, s := range strategies[:2] {
		t.Run(s.name, func(t *testing.T) {
			ctx := context.Background()
			db, load, _ := loadTargets(t, s.strategy)
			db.Exec(t, `CREATE TABLE x (id BIGINT PRIMARY KEY, v TEXT)`,
				`CREATE FUNCTION kill() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
					IF NEW.id = 200 THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF;
					RETURN NEW;
				END $$`,
				`CREATE TRIGGER kill BEFORE INSERT ON x FOR EACH ROW EXECUTE FUNCTION kill()`)
			tbl := describe(t, load, "x")
			var rs [][]any
			for i := 1; i <= 400; i++ {
				rs = append(rs, []any{int64(i), "v"})
			}
			u := &commit.Unit{Pipeline: "load", Batches: []*commit.Batch{
				{Table: tbl, Upserts: []commit.Group{{Columns: []string{"id", "v"}, Rows: rs, Pos: positions(len(rs))}}},
			}}
			if err := load.Apply(ctx, u); !errkind.IsTransient(err) || !strings.Contains(err.Error(), "copy 400 rows") {
				t.Fatalf("Apply with the session killed = %v, want a transient error of the load", err)
			}
			db.Exec(t, `DROP TRIGGER kill ON x`)
			apply(t, load, u)
			var n int
			if err := db.SQL.QueryRow(`SELECT COUNT(*) FROM x`).Scan(&n); err != nil || n != 400 {
				t.Fatalf("after the retry: %d rows (%v), want 400", n, err)
			}
		})
	}
}

// TestLoadAdaptive follows the adaptive upsert strategy on one session: a
// group whose keys are new goes straight into the table; one that meets an
// existing key is left to the array statement, and so are the table's
// next 1, 2, 4, ... groups before the next direct try; a direct success
// starts the count afresh. The table ends as statements alone leave it.
func TestLoadAdaptive(t *testing.T) {
	db, load, stmt := loadTargets(t, postgres.Adaptive)
	load.DB().SetMaxOpenConns(1)
	for _, name := range []string{"l", "s"} {
		db.Exec(t, "CREATE TABLE "+name+" (id BIGINT PRIMARY KEY, v TEXT)")
	}
	lt, st := describe(t, load, "l"), describe(t, stmt, "s")
	steps := []struct {
		first, last int
		want        counts
	}{
		{1, 100, counts{direct: 1}},
		{51, 150, counts{direct: 1, retried: 1}}, // meets 51..100: arrays, wait 1
		{151, 250, counts{}},                     // waits
		{251, 350, counts{direct: 1}},            // tries again, succeeds
		{300, 400, counts{direct: 1, retried: 1}},
		{401, 500, counts{}},
		{450, 550, counts{direct: 1, retried: 1}}, // wait 2
		{551, 650, counts{}},
		{651, 750, counts{}},
		{751, 850, counts{direct: 1}},
	}
	for i, step := range steps {
		var rs [][]any
		for k := step.first; k <= step.last; k++ {
			rs = append(rs, []any{int64(k), fmt.Sprintf("step %d", i)})
		}
		unit := func(tbl *schema.Table) *commit.Unit {
			return &commit.Unit{Pipeline: "load", Batches: []*commit.Batch{
				{Table: tbl, Upserts: []commit.Group{{Columns: []string{"id", "v"}, Rows: rs, Pos: positions(len(rs))}}},
			}}
		}
		before := loadCounts()
		apply(t, load, unit(lt))
		if got := before.delta(); got != step.want {
			t.Errorf("step %d (keys %d..%d): paths taken %+v, want %+v", i, step.first, step.last, got, step.want)
		}
		apply(t, stmt, unit(st))
	}
	sameRows(t, dump(t, db, "l"), dump(t, db, "s"))
}

// TestLoadAfterAlter widens columns between two units on one session: the
// session's staging table, made for the first unit, must take the second
// unit's longer values, as the statements do.
func TestLoadAfterAlter(t *testing.T) {
	for _, s := range strategies {
		t.Run(s.name, func(t *testing.T) {
			db, load, stmt := loadTargets(t, s.strategy)
			load.DB().SetMaxOpenConns(1)
			for _, name := range []string{"l", "s"} {
				db.Exec(t, "CREATE TABLE "+name+" (id BIGINT PRIMARY KEY, s VARCHAR(5), n NUMERIC(6,2), u UUID)")
			}
			units := func(tbl *schema.Table, text, num string) []*commit.Unit {
				var rs [][]any
				for i := 1; i <= 200; i++ {
					rs = append(rs, []any{int64(i), text, num, fmt.Sprintf("00000000-0000-4000-8000-%012d", i)})
				}
				g := commit.Group{Columns: []string{"id", "s", "n", "u"}, Rows: rs, Pos: positions(len(rs))}
				return []*commit.Unit{{Pipeline: "load", Batches: []*commit.Batch{batch(tbl, g, false)}}}
			}
			for _, u := range units(describe(t, load, "l"), "short", "1234.56") {
				apply(t, load, u)
			}
			db.Exec(t, `ALTER TABLE l ALTER s TYPE VARCHAR(20), ALTER n TYPE NUMERIC(12,4)`,
				`ALTER TABLE s ALTER s TYPE VARCHAR(20), ALTER n TYPE NUMERIC(12,4)`)
			for _, name := range []string{"l", "s"} {
				tdb := map[string]*sqlsink.DB{"l": load, "s": stmt}[name]
				for _, u := range units(describe(t, tdb, name), "much longer now", "12345678.1234") {
					apply(t, tdb, u)
				}
			}
			sameRows(t, dump(t, db, "l"), dump(t, db, "s"))
		})
	}
}

// TestLoadQuotedNames loads into a table and columns whose names need
// quoting, in a schema of their own.
func TestLoadQuotedNames(t *testing.T) {
	for _, s := range strategies {
		t.Run(s.name, func(t *testing.T) {
			db, load, stmt := loadTargets(t, s.strategy)
			// The schema is the server's, not the test database's: its
			// name is the run's own, so runs at once do not collide.
			odd := fmt.Sprintf(`Odd "Schema" %d`, rand.Int64())
			q := `"` + strings.ReplaceAll(odd, `"`, `""`) + `"`
			db.Exec(t, `CREATE SCHEMA `+q,
				`CREATE TABLE `+q+`."l ""x""" ("Id" BIGINT PRIMARY KEY, "sp ace" TEXT, "select" UUID)`,
				`CREATE TABLE `+q+`.s ("Id" BIGINT PRIMARY KEY, "sp ace" TEXT, "select" UUID)`)
			t.Cleanup(func() { db.Exec(t, `DROP SCHEMA `+q+` CASCADE`) })
			for _, name := range []string{`l "x"`, "s"} {
				tdb := map[string]*sqlsink.DB{"s": stmt}[name]
				if tdb == nil {
					tdb = load
				}
				tbl, err := tdb.Describe(context.Background(), schema.Name{Namespace: odd, Name: name})
				if err != nil {
					t.Fatal(err)
				}
				// Twice: new keys, then existing ones.
				for _, v := range []string{"one", "two"} {
					var rs [][]any
					for i := 1; i <= 100; i++ {
						rs = append(rs, []any{int64(i), v, fmt.Sprintf("00000000-0000-4000-8000-%012d", i)})
					}
					g := commit.Group{Columns: []string{"Id", "sp ace", "select"}, Rows: rs, Pos: positions(len(rs))}
					apply(t, tdb, &commit.Unit{Pipeline: "load", Batches: []*commit.Batch{batch(tbl, g, false)}})
				}
			}
			sameRows(t, dump(t, db, q+`."l ""x"""`), dump(t, db, q+`.s`))
		})
	}
}

// TestLoadDeclines offers groups for tables COPY would write differently
// from INSERT: a rule (COPY ignores rules), row-level security (COPY FROM
// refuses it), a view. Load must leave them to the statements, which
// honour them.
func TestLoadDeclines(t *testing.T) {
	tests := []struct {
		name  string
		ddl   []string
		noKey bool
		audit bool // the rule writes one audit row per row
	}{
		// An append-only table: ON CONFLICT refuses tables with rules.
		{"rule", []string{`CREATE TABLE audit (id BIGINT)`, `CREATE TABLE l (id BIGINT, v TEXT)`,
			`CREATE RULE audit AS ON INSERT TO l DO ALSO INSERT INTO audit VALUES (NEW.id)`}, true, true},
		{"row level security", []string{`CREATE TABLE l (id BIGINT PRIMARY KEY, v TEXT)`,
			`ALTER TABLE l ENABLE ROW LEVEL SECURITY`}, false, false},
		{"view", []string{`CREATE TABLE base (id BIGINT, v TEXT)`, `CREATE VIEW l AS SELECT id, v FROM base`}, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db, load, _ := loadTargets(t, postgres.Adaptive)
			db.Exec(t, tc.ddl...)
			var rs [][]any
			for i := 1; i <= 200; i++ {
				rs = append(rs, []any{int64(i), "v"})
			}
			g := commit.Group{Columns: []string{"id", "v"}, Rows: rs, Pos: positions(len(rs))}
			before := loadCounts()
			apply(t, load, &commit.Unit{Pipeline: "load", Batches: []*commit.Batch{batch(describe(t, load, "l"), g, tc.noKey)}})
			if d := before.delta(); d != (counts{}) {
				t.Errorf("Load took the group: %+v", d)
			}
			var n, audited int
			if err := db.SQL.QueryRow(`SELECT COUNT(*) FROM l`).Scan(&n); err != nil || n != len(rs) {
				t.Errorf("%d rows (%v), want %d", n, err, len(rs))
			}
			if tc.audit {
				if err := db.SQL.QueryRow(`SELECT COUNT(*) FROM audit`).Scan(&audited); err != nil || audited != len(rs) {
					t.Errorf("the rule wrote %d audit rows (%v), want %d", audited, err, len(rs))
				}
			}
		})
	}
}

// TestLoadLockTimeout loads into a table another transaction holds locked,
// on a session with a short lock_timeout: the lock wait error must be
// transient, and the retry after the lock is gone must succeed.
func TestLoadLockTimeout(t *testing.T) {
	for _, s := range strategies[:2] {
		t.Run(s.name, func(t *testing.T) {
			ctx := context.Background()
			db := testdb.Postgres(t)
			load, err := postgres.Open(ctx, db.URL+"&lock_timeout=100")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { load.Close() })
			postgres.SetLoad(t, 2, s.strategy)
			db.Exec(t, `CREATE TABLE x (id BIGINT PRIMARY KEY, v TEXT)`)
			var rs [][]any
			for i := 1; i <= 200; i++ {
				rs = append(rs, []any{int64(i), "v"})
			}
			g := commit.Group{Columns: []string{"id", "v"}, Rows: rs, Pos: positions(len(rs))}
			u := &commit.Unit{Pipeline: "load", Batches: []*commit.Batch{batch(describe(t, load, "x"), g, false)}}
			holder, err := db.SQL.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := holder.ExecContext(ctx, `LOCK TABLE x IN ACCESS EXCLUSIVE MODE`); err != nil {
				t.Fatal(err)
			}
			err = load.Apply(ctx, u)
			if rerr := holder.Rollback(); rerr != nil {
				t.Fatal(rerr)
			}
			if !errkind.IsTransient(err) || !strings.Contains(err.Error(), "copy 200 rows") {
				t.Fatalf("Apply behind a held lock = %v, want a transient error of the load", err)
			}
			apply(t, load, u)
		})
	}
}
