package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/sink/sqlsink"
	"github.com/txsink/txsink/sink/sqlsink/postgres"
)

// binaryColumns are richColumns without the arrays, which have no binary
// encoding, plus the typmods that make the server round, pad or refuse.
const binaryColumns = `s VARCHAR(40), t TEXT, c CHAR(5), b BYTEA, n NUMERIC(60,30), nu NUMERIC,
	ts TIMESTAMP(6), tz TIMESTAMPTZ(6), d DATE, tm TIME(6), j JSONB, js JSON,
	i2 SMALLINT, i4 INTEGER, i8 BIGINT, f4 REAL, f8 DOUBLE PRECISION, ok BOOLEAN, u UUID,
	v3 VARCHAR(3), c3 CHAR(3), n52 NUMERIC(5,2), ts0 TIMESTAMP(0), tz3 TIMESTAMPTZ(3), tm0 TIME(0)`

var binaryNames = strings.Fields("id s t c b n nu ts tz d tm j js i2 i4 i8 f4 f8 ok u v3 c3 n52 ts0 tz3 tm0")

// binaryRows returns richRows' values without the arrays, and values for
// the typmod columns that the server rounds, pads or cuts blanks off.
func binaryRows(first, last, variant int) [][]any {
	rows := richRows(first, last, variant)
	for n, r := range rows {
		i := first + n
		r = r[:len(r)-2]
		extra := []any{
			[]string{"ab ", "abc   ", "", "é李🙂"}[i%4],
			[]string{"a", "ab ", "abc  ", ""}[i%4],
			[]string{"1.005", "-1.004", "999.994", "0.0000", "-0.005", "12.5"}[i%6],
			time.Date(2026, 1, 2, 3, 4, 5, []int{0, 499999000, 500000000, 999999000}[i%4], time.UTC),
			time.Date(1, 1, 1, 0, 0, 0, []int{1000, 1500000, 2500000, 999500000}[i%4], time.FixedZone("y", -3600)).AddDate(i, 0, 0),
			[]string{"23:59:59.5", "00:00:00.499999", "24:00:00", "12:00:00.500000"}[i%4],
		}
		if r[1] == nil { // the all-NULL row of richRows
			for k := range extra {
				extra[k] = nil
			}
		}
		rows[n] = append(r, extra...)
	}
	return rows
}

// TestBinaryCopyMatchesText loads the same groups of every type with a
// binary encoding in COPY's text format and in its binary format, into
// twin tables, by each COPY path, and requires the server to have stored
// the same values: the binary receive functions apply the columns'
// modifiers (rounding numeric(5,2), timestamp(0) and time(0), padding
// char(3), cutting blanks beyond varchar(3)) as the input functions do.
func TestBinaryCopyMatchesText(t *testing.T) {
	for _, p := range copyPaths {
		t.Run(p.name, func(t *testing.T) {
			db, load, _ := loadTargets(t, p.strategy)
			for _, name := range []string{"txt", "bin"} {
				db.Exec(t, "CREATE TABLE "+name+" (id BIGINT"+keyClause(p.noKey)+", "+binaryColumns+")")
			}
			for variant := 1; variant <= 2; variant++ {
				rows := binaryRows(1, 300, variant)
				binaryLoad(t, load, describe(t, load, "txt"), rows, p.noKey, false)
				binaryLoad(t, load, describe(t, load, "bin"), rows, p.noKey, true)
				if p.noKey {
					break // an append-only table takes no second variant over the first
				}
			}
			sameRows(t, dump(t, db, "bin"), dump(t, db, "txt"))
		})
	}
}

// binaryLoad applies rows to tbl in one group, binary or not, and checks
// the format the load took.
func binaryLoad(t *testing.T, load *sqlsink.DB, tbl *schema.Table, rows [][]any, noKey, binary bool) {
	t.Helper()
	postgres.SetBinary(t, binary)
	before := postgres.BinaryLoads()
	g := commit.Group{Columns: binaryNames[:len(rows[0])], Rows: rows, Pos: positions(len(rows))}
	apply(t, load, &commit.Unit{Pipeline: "load", Batches: []*commit.Batch{batch(tbl, g, noKey)}})
	if n := postgres.BinaryLoads() - before; (n > 0) != binary {
		t.Fatalf("binary loads: %d, want binary %v", n, binary)
	}
}

// TestBinaryCopyRefuses loads groups with one value the server refuses
// (or, for the values binary cannot carry the same, that go as text) in
// both formats: both must fail, or both write the same, and the format
// taken must be the expected one.
func TestBinaryCopyRefuses(t *testing.T) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		column string // the column's definition
		good   any    // the other rows' value
		bad    any    // row 151's
		binary bool   // the group with bad goes binary
		fails  bool   // the server refuses bad
	}{
		{"varchar too long", "VARCHAR(3)", "abc", "abcd", true, true},
		{"char too long", "CHAR(3)", "abc", "abcd", true, true},
		{"text bad utf-8", "TEXT", "ok", "a\xffb", true, true},
		{"text nul", "TEXT", "ok", "a\x00b", true, true},
		{"varchar nul", "VARCHAR(10)", "ok", "\x00", true, true},
		{"json invalid", "JSON", `{}`, `{"a":}`, true, true},
		{"json bad utf-8", "JSON", `{}`, "\"\xff\"", true, true},
		{"jsonb invalid", "JSONB", `{}`, `[1,`, true, true},
		{"jsonb nul escape", "JSONB", `{}`, `"\u0000"`, true, true},
		{"numeric overflow", "NUMERIC(5,2)", "1.00", "1000.00", true, true},
		{"numeric rounds to overflow", "NUMERIC(5,2)", "1.00", "999.995", true, true},
		{"smallint out of range", "SMALLINT", int64(1), int64(40000), false, true},
		{"integer out of range", "INTEGER", int64(1), int64(math.MaxInt32 + 1), false, true},
		{"date invalid", "DATE", "2026-01-01", "2026-02-29", false, true},
		{"date year 0", "DATE", "2026-01-01", "0000-01-01", false, true},
		{"time beyond 24h", "TIME", "12:00:00", "24:00:00.000001", false, true},
		{"time negative", "TIME", "12:00:00", "-01:00:00", false, true},
		{"time hours", "TIME", "12:00:00", "100:00:00", false, true},
		{"uuid bad", "UUID", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", false, true},
		{"uuid braces", "UUID", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "{a0eebc999c0b4ef8bb6d6bb9bd380a11}", false, false},
		{"bytea as text", "BYTEA", []byte("x"), `\x41`, false, false},
		{"timestamp nanoseconds", "TIMESTAMP(6)", ts, ts.Add(1500 * time.Nanosecond), false, false},
		{"float4 not float32", "REAL", 0.5, 0.1, false, false},
		{"numeric exponent", "NUMERIC", "1", "1e3", false, false},
		{"numeric long", "NUMERIC", "1", strings.Repeat("9", 12000), false, false},
		// Types without a binary encoding: the whole group goes as text.
		{"array", "INTEGER[]", "{1}", "{1,NULL}", false, false},
		{"name cut", "NAME", "a", strings.Repeat("x", 70), false, false},
		{"interval", "INTERVAL", "1 day", "1 day 02:00", false, false},
	}
	for _, p := range copyPaths {
		t.Run(p.name, func(t *testing.T) {
			db, load, _ := loadTargets(t, p.strategy)
			for n, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					// Tables of their own: the session keeps what it
					// learnt of a table's columns by its name.
					names := []string{fmt.Sprintf("txt%d", n), fmt.Sprintf("bin%d", n)}
					for _, name := range names {
						db.Exec(t, "CREATE TABLE "+name+" (id BIGINT"+keyClause(p.noKey)+", v "+tc.column+")")
					}
					rows := make([][]any, 300)
					for i := range rows {
						rows[i] = []any{int64(i + 1), tc.good}
					}
					rows[150][1] = tc.bad
					var errs [2]error
					for f, name := range names {
						postgres.SetBinary(t, f == 1)
						before := postgres.BinaryLoads()
						tbl, err := load.Describe(context.Background(), schema.Name{Name: name})
						if err != nil {
							t.Fatal(err)
						}
						g := commit.Group{Columns: []string{"id", "v"}, Rows: rows, Pos: positions(len(rows))}
						errs[f] = load.Apply(context.Background(), &commit.Unit{Pipeline: "load", Batches: []*commit.Batch{batch(tbl, g, p.noKey)}})
						if got := postgres.BinaryLoads() > before; got != (f == 1 && tc.binary) {
							t.Errorf("%s: went binary %v, want %v", name, got, f == 1 && tc.binary)
						}
					}
					for f, err := range errs {
						if (err != nil) != tc.fails {
							t.Errorf("format %d: Apply = %v, want failure %v", f, err, tc.fails)
						}
					}
					sameRows(t, dump(t, db, names[1]), dump(t, db, names[0]))
				})
			}
		})
	}
}

// TestBinaryCopyAfterTypeChange changes a column's type while the session
// is open and loads with the description read before, as a pipeline
// would until it reads the table again: the unit fails as the text path's
// does (the shape changed), and once described again the session reads
// the new types and loads the group as text COPY would.
func TestBinaryCopyAfterTypeChange(t *testing.T) {
	changes := []struct{ from, to string }{
		{"INTEGER", "TEXT"},
		{"INTEGER", "BIGINT"},
		{"BIGINT", "SMALLINT"},
		{"VARCHAR(10)", "INTEGER"},
	}
	for _, p := range copyPaths {
		t.Run(p.name, func(t *testing.T) {
			db, load, _ := loadTargets(t, p.strategy)
			load.DB().SetMaxOpenConns(1)
			for n, ch := range changes {
				t.Run(ch.from+" to "+ch.to, func(t *testing.T) {
					names := []string{fmt.Sprintf("txt%d", n), fmt.Sprintf("bin%d", n)}
					for _, name := range names {
						db.Exec(t, "CREATE TABLE "+name+" (id BIGINT"+keyClause(p.noKey)+", v "+ch.from+")")
					}
					group := func(first int, text bool) commit.Group {
						rows := make([][]any, 200)
						for i := range rows {
							v := any(int64(first + i))
							if text {
								v = fmt.Sprint(first + i)
							}
							rows[i] = []any{int64(first + i), v}
						}
						return commit.Group{Columns: []string{"id", "v"}, Rows: rows, Pos: positions(len(rows))}
					}
					textFrom, textTo := strings.HasPrefix(ch.from, "VARCHAR"), ch.to == "TEXT"
					for f, name := range names {
						postgres.SetBinary(t, f == 1)
						tbl := describe(t, load, name)
						apply(t, load, &commit.Unit{Pipeline: "load", Batches: []*commit.Batch{batch(tbl, group(1, textFrom), p.noKey)}})
						db.Exec(t, "ALTER TABLE "+name+" ALTER v TYPE "+ch.to+" USING v::text::"+ch.to)
						err := load.Apply(context.Background(), &commit.Unit{Pipeline: "load", Batches: []*commit.Batch{batch(tbl, group(101, textFrom), p.noKey)}})
						if !errors.Is(err, sink.ErrShapeChanged) {
							t.Fatalf("%s: Apply after the ALTER = %v, want the shape changed", name, err)
						}
						before := postgres.BinaryLoads()
						apply(t, load, &commit.Unit{Pipeline: "load", Batches: []*commit.Batch{batch(describe(t, load, name), group(101, textTo), p.noKey)}})
						if got := postgres.BinaryLoads() > before; got != (f == 1) {
							t.Errorf("%s: went binary %v after describing again", name, got)
						}
					}
					sameRows(t, dump(t, db, names[1]), dump(t, db, names[0]))
				})
			}
		})
	}
}

// TestBinaryCopyNeedsVersion loads with a description that has no shape
// version (DescribeOn's, for readers): no shape check would then catch a
// type changed after the session's catalog read, so the group goes as
// text.
func TestBinaryCopyNeedsVersion(t *testing.T) {
	ctx := context.Background()
	db, load, _ := loadTargets(t, postgres.Adaptive)
	db.Exec(t, "CREATE TABLE nv (id BIGINT PRIMARY KEY, v TEXT)")
	tbl, err := load.DescribeOn(ctx, load.DB(), schema.Name{Name: "nv"})
	if err != nil {
		t.Fatal(err)
	}
	if tbl.Version != "" {
		t.Fatalf("DescribeOn gave version %q", tbl.Version)
	}
	rows := [][]any{{int64(1), "a"}, {int64(2), "b"}, {int64(3), nil}}
	before, loaded := postgres.BinaryLoads(), loadCounts()
	apply(t, load, &commit.Unit{Pipeline: "load", Batches: []*commit.Batch{batch(tbl, commit.Group{Columns: []string{"id", "v"}, Rows: rows, Pos: positions(3)}, false)}})
	if d := loaded.delta(); d.direct != 1 || postgres.BinaryLoads() != before {
		t.Errorf("loads %+v, binary %d: want one direct load in text", d, postgres.BinaryLoads()-before)
	}
	sameRows(t, dump(t, db, "nv"), []string{"(1,a)", "(2,b)", "(3,)"})
}
