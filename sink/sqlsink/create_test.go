package sqlsink_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/schema/coltype"
	"github.com/txsink/txsink/sink"
)

// roundTrip is one column of TestCreateRoundTrip: a source type, the
// boundary value a row carries for it, and the text the server gives
// back (want, or wantBy[dialect] where servers differ).
type roundTrip struct {
	col    string
	typ    coltype.Type
	value  changelog.Value
	want   string
	wantBy map[string]string
}

var roundTrips = []roundTrip{
	{col: "dec_max", typ: coltype.Type{Kind: coltype.Decimal, Precision: 65, Scale: 30},
		value: changelog.Number("99999999999999999999999999999999999.999999999999999999999999999999"),
		want:  "99999999999999999999999999999999999.999999999999999999999999999999"},
	{col: "dec_neg", typ: coltype.Type{Kind: coltype.Decimal, Precision: 10, Scale: 2},
		value: changelog.Number("-99999999.99"), want: "-99999999.99"},
	{col: "dec_var", typ: coltype.Type{Kind: coltype.Decimal, Scale: coltype.VariableScale},
		value: changelog.Number("-12345678901234567890.123456789"), want: "-12345678901234567890.123456789",
		wantBy: map[string]string{"mysql": "-12345678901234567890.123456789000000000000000000000"}},
	{col: "str_utf8", typ: coltype.Type{Kind: coltype.String}, value: "😀𝄞 naïve 日本", want: "😀𝄞 naïve 日本"},
	{col: "str_len", typ: coltype.Type{Kind: coltype.String, Length: 5}, value: "😀😀😀😀😀", want: "😀😀😀😀😀"},
	{col: "str_fixed", typ: coltype.Type{Kind: coltype.String, Length: 3, Fixed: true}, value: "a😀c", want: "a😀c"},
	{col: "int8", typ: coltype.Type{Kind: coltype.Int, Bits: 8}, value: changelog.Number("-128"), want: "-128"},
	{col: "uint8", typ: coltype.Type{Kind: coltype.Int, Bits: 8, Unsigned: true}, value: changelog.Number("255"), want: "255"},
	{col: "int16", typ: coltype.Type{Kind: coltype.Int, Bits: 16}, value: changelog.Number("-32768"), want: "-32768"},
	{col: "uint16", typ: coltype.Type{Kind: coltype.Int, Bits: 16, Unsigned: true}, value: changelog.Number("65535"), want: "65535"},
	{col: "int24", typ: coltype.Type{Kind: coltype.Int, Bits: 24}, value: changelog.Number("-8388608"), want: "-8388608"},
	{col: "uint32", typ: coltype.Type{Kind: coltype.Int, Bits: 32, Unsigned: true}, value: changelog.Number("4294967295"), want: "4294967295"},
	{col: "int64", typ: coltype.Type{Kind: coltype.Int, Bits: 64}, value: changelog.Number("-9223372036854775808"), want: "-9223372036854775808"},
	{col: "uint64", typ: coltype.Type{Kind: coltype.Int, Bits: 64, Unsigned: true}, value: changelog.Number("18446744073709551615"), want: "18446744073709551615"},
	{col: "f64", typ: coltype.Type{Kind: coltype.Float, Bits: 64}, value: changelog.Number("1.7976931348623157e308"), want: "1.7976931348623157e+308",
		wantBy: map[string]string{"postgres": "1.7976931348623157e+308", "mysql": "1.7976931348623157e308"}},
	{col: "f32", typ: coltype.Type{Kind: coltype.Float, Bits: 32}, value: changelog.Number("0.5"), want: "0.5"},
	{col: "bool", typ: coltype.Type{Kind: coltype.Bool}, value: true, want: "1", wantBy: map[string]string{"postgres": "true"}},
	{col: "day_far", typ: coltype.Type{Kind: coltype.Date}, value: "9999-12-31", want: "9999-12-31"},
	{col: "day_early", typ: coltype.Type{Kind: coltype.Date}, value: "0001-01-01", want: "0001-01-01"},
	{col: "dt_micro", typ: coltype.Type{Kind: coltype.DateTime, Frac: 6}, value: "9999-12-31 23:59:59.999999", want: "9999-12-31 23:59:59.999999"},
	{col: "dt_milli", typ: coltype.Type{Kind: coltype.DateTime, Frac: 3}, value: "1969-12-31 23:59:59.001", want: "1969-12-31 23:59:59.001"},
	{col: "ts_micro", typ: coltype.Type{Kind: coltype.Timestamp, Frac: 6}, value: "2038-01-19T05:14:08.000001+02:00", want: "2038-01-19 03:14:08.000001",
		wantBy: map[string]string{"postgres": "2038-01-19 03:14:08.000001+00", "sqlite": "2038-01-19T03:14:08.000001Z"}},
	{col: "time_milli", typ: coltype.Type{Kind: coltype.Time, Frac: 3}, value: "00:00:00.001", want: "00:00:00.001"},
	{col: "time_micro", typ: coltype.Type{Kind: coltype.Time, Frac: 6}, value: "23:59:59.999999", want: "23:59:59.999999"},
	{col: "doc", typ: coltype.Type{Kind: coltype.JSON}, value: changelog.JSON(`{"b":1,"a":["😀",null]}`), want: `{"b":1,"a":["😀",null]}`},
	{col: "id_uuid", typ: coltype.Type{Kind: coltype.UUID}, value: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", want: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
	{col: "state", typ: coltype.Type{Kind: coltype.Enum, Values: []string{"new", `it's \ done`}}, value: `it's \ done`, want: `it's \ done`},
	{col: "blob", typ: coltype.Type{Kind: coltype.Bytes}, value: []byte{0, 1, 0xfe, 0xff}, want: "0001feff"},
	{col: "bin_fixed", typ: coltype.Type{Kind: coltype.Bytes, Length: 2, Fixed: true}, value: []byte{0xab, 0xcd}, want: "abcd"},
	{col: "bits", typ: coltype.Type{Kind: coltype.Bytes, Length: 2}, value: []byte{0xff, 0x01}, want: "ff01"},
}

// TestCreateRoundTrip creates a table of every source type on each real
// server (sink.Creator), writes a row of boundary values and a row of
// NULLs through the sink, and reads them back: what the source declared
// holds what the source sends, exactly. With defaults, every column
// declares the boundary value as its source default too, and a third
// row carrying only its key (a partial image) reads back that value in
// every column: each default is rendered type-correct on each server.
func TestCreateRoundTrip(t *testing.T) {
	for _, d := range testdb.Dialects {
		for _, defaults := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/defaults=%v", d, defaults), func(t *testing.T) {
				t.Parallel()
				createRoundTrip(t, d, defaults)
			})
		}
	}
}

func createRoundTrip(t *testing.T, d string, defaults bool) {
	db := testdb.Open(t, d)
	s, err := sink.Open(context.Background(), db.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	decl := &coltype.Table{From: "the test", Columns: []coltype.Column{{Name: "id", Type: coltype.Type{Kind: coltype.Int, Bits: 64}}}}
	for _, rt := range roundTrips {
		c := coltype.Column{Name: rt.col, Type: rt.typ, Nullable: true}
		if defaults {
			c.Default = rt.value
		}
		decl.Columns = append(decl.Columns, c)
	}
	decl, err = decl.WithKey([]string{"id"})
	if err != nil {
		t.Fatal(err)
	}
	name := schema.Name{Name: "rt"}
	cr := s.(sink.Creator)
	if err := cr.Create(ctx, name, decl); err != nil {
		t.Fatal(err)
	}
	if err := cr.Create(ctx, name, decl); err != nil {
		t.Fatalf("a second Create of an existing table: %v", err)
	}
	st, err := s.Describe(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := reduce.NewTable(st, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	full, nulls := changelog.RowOf("id", changelog.Number("1")), changelog.RowOf("id", changelog.Number("2"))
	for _, rt := range roundTrips {
		full.Set(rt.col, rt.value)
		nulls.Set(rt.col, nil)
	}
	rows := []changelog.Row{full, nulls}
	if defaults {
		rows = append(rows, changelog.RowOf("id", changelog.Number("3")))
	}
	buf := reduce.NewBuffer("create-test")
	for i, row := range rows {
		c := changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Name: "rt"}, After: row,
			Pos: changelog.Position{Partition: "p0", Offset: int64(i + 1), Seq: int64(i + 1)}, Size: 100}
		if err := buf.Add(tbl, &c, time.Unix(0, 0)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, buf.Take()); err != nil {
		t.Fatal(err)
	}
	for _, rt := range roundTrips {
		want := rt.want
		if w, ok := rt.wantBy[d]; ok {
			want = w
		}
		q := "SELECT " + asText(d, db.Quote(rt.col), rt.typ) + " FROM " + db.Quote("rt") + " WHERE id = "
		for i := range rows {
			var got *string
			if err := db.SQL.QueryRow(q + strconv.Itoa(i+1)).Scan(&got); err != nil {
				t.Fatalf("%s: %v", rt.col, err)
			}
			switch {
			case i == 1 && got != nil:
				t.Errorf("%s: got %q for NULL", rt.col, *got)
			case i == 1:
			case got == nil:
				t.Errorf("%s (%s, %s) row %d: got NULL, want %q", rt.col, rt.typ, columnSQL(st, rt.col), i+1, want)
			case *got != want:
				t.Errorf("%s (%s, %s) row %d: got %q, want %q", rt.col, rt.typ, columnSQL(st, rt.col), i+1, *got, want)
			}
		}
	}
}

// asText is the query expression reading quoted back as text: binary
// as hex, the rest as the server writes it.
func asText(dialect, quoted string, typ coltype.Type) string {
	if typ.Kind == coltype.Bytes {
		switch dialect {
		case "postgres":
			return "encode(" + quoted + ", 'hex')"
		default: // SQLite's hex(NULL) is ''
			return "CASE WHEN " + quoted + " IS NULL THEN NULL ELSE lower(hex(" + quoted + ")) END"
		}
	}
	switch dialect {
	case "postgres":
		return quoted + "::text"
	case "mysql":
		return "CAST(" + quoted + " AS CHAR)"
	}
	return "CAST(" + quoted + " AS TEXT)"
}

func columnSQL(t *schema.Table, name string) string {
	if c, ok := t.Column(name); ok {
		return c.SQLType
	}
	return "missing"
}

// TestCreateRefusesWhatItCannotHold checks that a type a dialect has no
// column for is refused before anything runs, naming the column and why.
func TestCreateRefusesWhatItCannotHold(t *testing.T) {
	cases := []struct {
		name string
		col  coltype.Column
		key  bool
		want string
	}{
		{"geometry", coltype.Column{Name: "shape", Type: coltype.ParseMySQL("geometry")}, false, "column shape (unsupported [geometry]): txsink does not create spatial columns"},
		{"json key", coltype.Column{Name: "doc", Type: coltype.Type{Kind: coltype.JSON}}, true, "column doc (json): a JSON column cannot be in a primary key"},
		{"decimal too wide", coltype.Column{Name: "d", Type: coltype.Type{Kind: coltype.Decimal, Precision: 70, Scale: 2}}, false, "DECIMAL holds at most 65 digits"},
	}
	db := testdb.Open(t, "mysql")
	s, err := sink.Open(context.Background(), db.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			decl := &coltype.Table{From: "the test", Columns: []coltype.Column{{Name: "id", Type: coltype.Type{Kind: coltype.Int, Bits: 32}}, tc.col}}
			key := []string{"id"}
			if tc.key {
				key = append(key, tc.col.Name)
			}
			decl, _ = decl.WithKey(key)
			_, err := s.(sink.Creator).CreateStatements(schema.Name{Name: "refused"}, decl)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
