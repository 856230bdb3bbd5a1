package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/sink/sqlsink/postgres"
)

func TestAppendArray(t *testing.T) {
	d := postgres.Dialect{}
	tests := []struct {
		col  schema.Column
		vals []any
		want string
	}{
		{schema.Column{Class: schema.Int, Bits: 64}, []any{int64(1), nil, int64(-7)}, `{1,NULL,-7}`},
		{schema.Column{Class: schema.String}, []any{"", "NULL", `a"b\c`, "{x,y} z\n"}, `{"","NULL","a\"b\\c","{x,y} z` + "\n" + `"}`},
		{schema.Column{Class: schema.Bytes}, []any{[]byte{0, 0xff}}, `{"\\x00ff"}`},
		{schema.Column{Class: schema.Bool}, []any{true, false}, `{t,f}`},
		{schema.Column{Class: schema.Float, Bits: 64}, []any{0.1, 1e300}, `{0.1,1e+300}`},
		{schema.Column{Class: schema.DateTime}, []any{time.Date(2026, 1, 2, 3, 4, 5, 120000000, time.UTC)}, `{"2026-01-02 03:04:05.12"}`},
		{schema.Column{Class: schema.Timestamp}, []any{time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))}, `{"2026-01-02 02:04:05+00:00"}`},
	}
	for _, tc := range tests {
		tuples := make([][]any, len(tc.vals))
		for i, v := range tc.vals {
			tuples[i] = []any{v}
		}
		if got := string(d.AppendArray(nil, &tc.col, tuples, 0)); got != tc.want {
			t.Errorf("%s %v: got %s, want %s", tc.col.Class, tc.vals, got, tc.want)
		}
	}
}

func TestArrayStatements(t *testing.T) {
	d := postgres.Dialect{}
	tbl := &schema.Table{Name: "t", PrimaryKey: []string{"a", "b"}, Columns: []schema.Column{
		{Name: "a", Class: schema.Int, Bits: 32}, {Name: "b", Class: schema.String, Fixed: true}, {Name: "v", Class: schema.Decimal},
	}}
	cols := []*schema.Column{&tbl.Columns[0], &tbl.Columns[1], &tbl.Columns[2]}
	var b strings.Builder
	if !d.ArrayUpsert(&b, tbl, cols) {
		t.Fatal("ArrayUpsert refused")
	}
	want := `INSERT INTO "t" ("a","b","v") SELECT * FROM unnest($1::text::int4[],$2::text::bpchar[],$3::text::numeric[]) ON CONFLICT ("a","b") DO UPDATE SET "v"=EXCLUDED."v"`
	if b.String() != want {
		t.Errorf("upsert:\n got %s\nwant %s", b.String(), want)
	}
	b.Reset()
	if !d.GuardedArrayUpsert(&b, tbl, cols, "v") {
		t.Fatal("GuardedArrayUpsert refused")
	}
	want += ` WHERE "t"."v" IS NULL OR "t"."v" <= EXCLUDED."v"`
	if b.String() != want {
		t.Errorf("guarded upsert:\n got %s\nwant %s", b.String(), want)
	}
	b.Reset()
	if !d.ArrayDelete(&b, tbl, cols[:2]) {
		t.Fatal("ArrayDelete refused")
	}
	want = `DELETE FROM "t" AS t USING unnest($1::text::int4[],$2::text::bpchar[]) AS k(k1,k2) WHERE t."a" = k.k1 AND t."b" = k.k2`
	if b.String() != want {
		t.Errorf("delete:\n got %s\nwant %s", b.String(), want)
	}
	b.Reset()
	if !d.ArrayDelete(&b, tbl, cols[:1]) {
		t.Fatal("ArrayDelete refused")
	}
	want = `DELETE FROM "t" AS t USING unnest($1::text::int4[]) AS k(k1) WHERE t."a" = k.k1`
	if b.String() != want {
		t.Errorf("delete by one column:\n got %s\nwant %s", b.String(), want)
	}
	b.Reset()
	if d.ArrayInsert(&b, tbl, []*schema.Column{{Name: "u", Class: schema.Unknown}}) {
		t.Error("ArrayInsert took a column of unknown type; it must leave it to the VALUES path")
	}
}

// TestArrayPathRoundTrip applies units through the array path and reads
// every value back: text that an array literal could misread, binary data,
// date-times, NULLs, deletes by one and by two key columns, and a refused
// row, which must still be named by key and position.
func TestArrayPathRoundTrip(t *testing.T) {
	db := testdb.Postgres(t)
	db.Exec(t,
		`CREATE TABLE t (id BIGINT PRIMARY KEY, s VARCHAR(8), b BYTEA, ts TIMESTAMP(3), tz TIMESTAMPTZ, n NUMERIC(6,2), f REAL, ok BOOLEAN, j JSONB)`,
		`CREATE TABLE k (a INT, c CHAR(3), v TEXT, PRIMARY KEY (a, c))`)
	ctx := context.Background()
	tdb, err := postgres.Open(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer tdb.Close()
	describe := func(name string) *schema.Table {
		tbl, err := tdb.Describe(ctx, schema.Name{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	tt, kt := describe("t"), describe("k")
	texts := []any{"", "NULL", `a"b\c`, "{x,y}", " sp ", "é李\n\t", nil, "ok"}
	var rows [][]any
	for i, s := range texts {
		rows = append(rows, []any{int64(i + 1), s, []byte{byte(i), 0xff, '\\'},
			time.Date(2026, 1, 2, 3, 4, 5, i*1000000, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
			fmt.Sprintf("%d.25", i), float64(float32(0.1)), i%2 == 0, `{"k": "v\"q"}`})
	}
	unit := &commit.Unit{Pipeline: "arrays", Batches: []*commit.Batch{
		{Table: tt, Upserts: []commit.Group{{Columns: []string{"id", "s", "b", "ts", "tz", "n", "f", "ok", "j"}, Rows: rows, Pos: positions(len(rows))}}},
		{Table: kt, Upserts: []commit.Group{{Columns: []string{"a", "c", "v"}, Rows: [][]any{{int64(1), "ab", "x"}, {int64(1), "abc", "y"}, {int64(2), "ab", "z"}}, Pos: positions(3)}}},
	}}
	if err := tdb.Apply(ctx, unit); err != nil {
		t.Fatal(err)
	}
	for i, want := range texts {
		var s *string
		var b []byte
		var ts, tz time.Time
		var n string
		var f float32
		var ok bool
		var j string
		err := db.SQL.QueryRow(`SELECT s, b, ts, tz, n::text, f, ok, j::text FROM t WHERE id = $1`, i+1).Scan(&s, &b, &ts, &tz, &n, &f, &ok, &j)
		if err != nil {
			t.Fatal(err)
		}
		if (want == nil) != (s == nil) || (s != nil && *s != want) {
			t.Errorf("row %d: s = %v, want %q", i+1, s, want)
		}
		if string(b) != string([]byte{byte(i), 0xff, '\\'}) || ts.Nanosecond() != i*1000000 || !tz.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) ||
			n != fmt.Sprintf("%d.25", i) || f != float32(0.1) || ok != (i%2 == 0) || j != `{"k": "v\"q"}` {
			t.Errorf("row %d: b=%x ts=%v tz=%v n=%s f=%v ok=%v j=%s", i+1, b, ts, tz, n, f, ok, j)
		}
	}

	// Deletes by a single and a composite key; "ab" must match the
	// blank-padded CHAR(3) value.
	unit = &commit.Unit{Pipeline: "arrays", Batches: []*commit.Batch{
		{Table: tt, Deletes: [][]any{{int64(1)}, {int64(2)}, {int64(99)}}, DeletePos: positions(3)},
		{Table: kt, Deletes: [][]any{{int64(1), "ab"}, {int64(2), "ab"}}, DeletePos: positions(2)},
	}}
	if err := tdb.Apply(ctx, unit); err != nil {
		t.Fatal(err)
	}
	var nt, nk int
	if err := db.SQL.QueryRow(`SELECT (SELECT COUNT(*) FROM t), (SELECT COUNT(*) FROM k)`).Scan(&nt, &nk); err != nil {
		t.Fatal(err)
	}
	if nt != len(texts)-2 || nk != 1 {
		t.Errorf("after deletes: %d rows in t, %d in k; want %d and 1", nt, nk, len(texts)-2)
	}

	// A string too long for VARCHAR(8) fails the array statement; the
	// row-by-row replay names its key and position.
	bad := [][]any{{int64(100), "fine"}, {int64(101), "much too long"}, {int64(102), "fine"}}
	unit = &commit.Unit{Pipeline: "arrays", Batches: []*commit.Batch{
		{Table: tt, Upserts: []commit.Group{{Columns: []string{"id", "s"}, Rows: bad, Pos: positions(3)}}},
	}}
	err = tdb.Apply(ctx, unit)
	var te *sink.Error
	if !errors.As(err, &te) || te.Key != "(101)" || te.Pos != "p:2" || te.Transient {
		t.Fatalf("refused row: got %v, want key (101) at p:2", err)
	}
	if err := db.SQL.QueryRow(`SELECT COUNT(*) FROM t WHERE id >= 100`).Scan(&nt); err != nil || nt != 0 {
		t.Errorf("a failed unit left %d rows (err %v)", nt, err)
	}
}

func positions(n int) []changelog.Position {
	out := make([]changelog.Position, n)
	for i := range out {
		out[i] = changelog.Position{Partition: "p", Offset: int64(i + 1), Seq: int64(i + 1)}
	}
	return out
}

// BenchmarkArrayUpsert measures building one 5000-row, 6-column array
// upsert: the statement text and the six array literals.
func BenchmarkArrayUpsert(b *testing.B) {
	d := postgres.Dialect{}
	tbl := &schema.Table{Name: "orders", PrimaryKey: []string{"id"}, Columns: []schema.Column{
		{Name: "id", Class: schema.Int, Bits: 64}, {Name: "customer", Class: schema.String}, {Name: "status", Class: schema.String},
		{Name: "amount", Class: schema.Decimal}, {Name: "created_at", Class: schema.DateTime, FracDigits: 3}, {Name: "note", Class: schema.String, Nullable: true},
	}}
	cols := make([]*schema.Column, len(tbl.Columns))
	for i := range tbl.Columns {
		cols[i] = &tbl.Columns[i]
	}
	tuples := make([][]any, 5000)
	for i := range tuples {
		tuples[i] = []any{int64(i + 1), "Margaret", "SHIPPED", "1234.50", time.Date(2026, 11, 1, 8, 0, i%60, 123000000, time.UTC), nil}
	}
	b.ReportAllocs()
	var sb strings.Builder
	var buf []byte
	var n int
	for b.Loop() {
		sb.Reset()
		d.ArrayUpsert(&sb, tbl, cols)
		n = sb.Len()
		for i, c := range cols {
			buf = d.AppendArray(buf[:0], c, tuples, i)
			n += len(buf)
		}
	}
	b.SetBytes(int64(n))
}

// TestArrayDeletePlan checks how the server plans the delete of many keys
// from a table just filled, with no statistics yet (the first deletes of a
// table txsink loaded): it must join with the keys, never compare each row
// with every key as a sequential scan's filter of "= ANY" does, which is
// quadratic (715 keys over 20,000 rows took 1.1 s that way, the join 6 ms).
func TestArrayDeletePlan(t *testing.T) {
	db := testdb.Postgres(t)
	db.Exec(t, `CREATE TABLE big (id BIGINT PRIMARY KEY, v TEXT)`,
		`INSERT INTO big SELECT g, 'v' FROM generate_series(1, 20000) g`)
	tbl := &schema.Table{Name: "big", PrimaryKey: []string{"id"}, Columns: []schema.Column{{Name: "id", Class: schema.Int, Bits: 64}, {Name: "v", Class: schema.String}}}
	var b strings.Builder
	if !(postgres.Dialect{}).ArrayDelete(&b, tbl, []*schema.Column{&tbl.Columns[0]}) {
		t.Fatal("ArrayDelete refused")
	}
	keys := make([]string, 0, 715)
	for id := 1; id <= 20000; id += 28 {
		keys = append(keys, fmt.Sprint(id))
	}
	plan := queryStrings(t, db, "EXPLAIN (COSTS OFF) "+b.String(), "{"+strings.Join(keys, ",")+"}")
	text := strings.Join(plan, "\n")
	if strings.Contains(text, "ANY") || !strings.Contains(text, "k.k1") {
		t.Errorf("the delete is not planned as a join with its keys:\n%s", text)
	}
}
