package native

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/internal/decodetest"
)

var testPos = changelog.Position{Partition: "orders.jsonl", Offset: 100, Seq: 3}

func newDecoder(t testing.TB) *Decoder {
	t.Helper()
	d, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var row = changelog.RowOf

// TestDecodeTestdata decodes the examples of the package documentation.
func TestDecodeTestdata(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "orders.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	orders := changelog.Table{Namespace: "inventory", Name: "orders"}
	want := []changelog.Change{
		{Kind: changelog.Insert, Table: orders, After: row("id", changelog.Number("1"), "amount", "9.99", "note", nil)},
		{Kind: changelog.UpdateAfter, Table: orders, After: row("id", changelog.Number("1"), "amount", "12.50", "note", "gift"),
			Before: row("id", changelog.Number("1")), TxnID: "tx-42"},
		{Kind: changelog.Delete, Table: orders, Before: row("id", changelog.Number("1")), TxnID: "tx-42", TxnEnd: true},
		{Kind: changelog.Insert, Table: changelog.Table{Name: "events"}, After: row("id", changelog.Number("7"), "payload", changelog.JSON(`{"tags":["a","b"]}`))},
		{Kind: changelog.UpdateBefore, Table: orders, Before: row("id", changelog.Number("2"), "amount", changelog.Number("1e-3"))},
	}
	d := newDecoder(t)
	var got []changelog.Change
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		pos := changelog.Position{Partition: "orders.jsonl", Seq: int64(i + 1)}
		cs, err := d.Decode(line, pos)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		for _, c := range cs {
			if c.Pos != pos || int(c.Size) != len(line) {
				t.Errorf("line %d: Pos, Size = %v, %d", i+1, c.Pos, c.Size)
			}
			c.Pos, c.Size = changelog.Position{}, 0
			got = append(got, c)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%#v\nwant\n%#v", got, want)
	}
}

func TestDecodeNoChange(t *testing.T) {
	d := newDecoder(t)
	for _, in := range []string{"", " ", "\r\n", "\t"} {
		if cs, err := d.Decode([]byte(in), testPos); cs != nil || err != nil {
			t.Errorf("Decode(%q) = %v, %v; want nothing", in, cs, err)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	d := newDecoder(t)
	for _, tc := range []struct{ in, reason, table string }{
		{`{"op":"+I","table":"db.t","row":{"id":1}`, "invalid JSON", "db.t"},
		{`{"op":"+I","table":"db.t","row":{"id":1}} x`, "invalid JSON", "db.t"},
		{`[1]`, "record is a JSON array", ""},
		{`null`, "record is a JSON null", ""},
		{`{"op":"+I","table":"db.t","rows":{"id":1}}`, `unknown field "rows"`, "db.t"},
		{`{"op":"+I","tabel":"db.t","row":{"id":1}}`, `unknown field "tabel"`, ""},
		{`{"table":"db.t","row":{"id":1}}`, `record has no "op" field`, "db.t"},
		{`{"op":"+I","row":{"id":1}}`, `record has no "table" field`, ""},
		{`{"op":"+I","table":"db.t"}`, `record has no "row" field`, "db.t"},
		{`{"op":"I","table":"db.t","row":{"id":1}}`, `"op" must be "+I", "+U", "-U", "-D" or "TRUNCATE", not "I"`, ""},
		{`{"op":1,"table":"db.t","row":{"id":1}}`, `"op" must be`, ""},
		{`{"op":"+I","table":"db.","row":{"id":1}}`, `"table" "db." has an empty namespace or name`, ""},
		{`{"op":"+I","table":".t","row":{"id":1}}`, `has an empty namespace or name`, ""},
		{`{"op":"+I","table":"","row":{"id":1}}`, `has an empty namespace or name`, ""},
		{`{"op":"+I","table":5,"row":{"id":1}}`, `"table" must be a string`, ""},
		{`{"op":"+I","table":"db.t","row":null}`, `"row" must be an object, not a null`, "db.t"},
		{`{"op":"+I","table":"db.t","row":{}}`, `"row" has no columns`, "db.t"},
		{`{"op":"+I","table":"db.t","row":{"id":1,"id":2}}`, `"row": duplicate column "id"`, "db.t"},
		{`{"op":"+I","table":"db.t","row":{"id":1},"before":{"id":1}}`, `"before" is only allowed with op "+U"`, "db.t"},
		{`{"op":"+U","table":"db.t","row":{"id":1},"before":[1]}`, `"before" must be an object`, "db.t"},
		{`{"op":"+I","table":"db.t","row":{"id":1},"txn":7}`, `"txn" must be a string`, "db.t"},
		{`{"op":"+I","table":"db.t","row":{"id":1},"txn_end":"yes"}`, `"txn_end" must be true or false`, "db.t"},
		{`{"op":"+I","op":"-D","table":"db.t","row":{"id":1}}`, `field "op" appears twice`, ""},
		{`{"op":"TRUNCATE","table":"db.t","row":{"id":1}}`, `a "TRUNCATE" record has a "row"`, "db.t"},
		{`{"op":"TRUNCATE","row":{"id":1}}`, `record has no "table" field`, ""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			cs, err := d.Decode([]byte(tc.in), testPos)
			var fe *format.Error
			if !errors.As(err, &fe) {
				t.Fatalf("Decode = %v, %v; want a *format.Error", cs, err)
			}
			if cs != nil || fe.Pos != testPos || fe.Format != Name || fe.Hint == "" || fe.Table != tc.table {
				t.Errorf("error %#v (changes %v), want position, format, hint and table %q", fe, cs, tc.table)
			}
			if !strings.Contains(fe.Reason, tc.reason) {
				t.Errorf("Reason = %q, want it to contain %q", fe.Reason, tc.reason)
			}
			if !strings.HasPrefix(fe.Error(), Name+": orders.jsonl:3: ") {
				t.Errorf("Error() = %q", fe.Error())
			}
		})
	}
}

func TestParseTable(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want changelog.Table
	}{
		{"orders", changelog.Table{Name: "orders"}},
		{"inventory.orders", changelog.Table{Namespace: "inventory", Name: "orders"}},
		{"a.b.c", changelog.Table{Namespace: "a", Name: "b.c"}},
	} {
		if got, err := ParseTable(tc.in); err != nil || got != tc.want {
			t.Errorf("ParseTable(%q) = %#v, %v; want %#v", tc.in, got, err, tc.want)
		}
	}
}

func TestNewOptions(t *testing.T) {
	if _, err := New(format.Options{"native.strict": "true"}); err == nil || !strings.Contains(err.Error(), `"native.strict"`) {
		t.Errorf("New with an unknown option: %v", err)
	}
}

// roundTripChanges covers every kind, value type and optional field.
func roundTripChanges() []changelog.Change {
	return []changelog.Change{
		{Kind: changelog.Insert, Table: changelog.Table{Namespace: "inventory", Name: "orders"},
			After: row("id", changelog.Number("1"), "amount", changelog.Number("123456789012345678901234567890.123"),
				"note", "tab\t\"quoted\" \\ é 😀 \x00\x1f", "flag", true, "off", false, "none", nil,
				"doc", changelog.JSON(`{"a":[1,2,{"b":null}],"c":"x"}`), "list", changelog.JSON(`[]`), "empty", "")},
		{Kind: changelog.UpdateAfter, Table: changelog.Table{Namespace: "s", Name: "t.with.dots"},
			Before: row("id", changelog.Number("1")), After: row("id", changelog.Number("2"), "v", changelog.Number("-0.5e-10")),
			TxnID: "571:53195832"},
		{Kind: changelog.UpdateAfter, Table: changelog.Table{Name: "plain"}, After: row("id", changelog.Number("2"))},
		{Kind: changelog.UpdateBefore, Table: changelog.Table{Name: "plain"}, Before: row("id", changelog.Number("2"), "v", "old")},
		{Kind: changelog.Delete, Table: changelog.Table{Namespace: "db", Name: "t"}, Before: row("k1", "a", "k2", changelog.Number("3")),
			TxnID: "tx", TxnEnd: true},
		{Kind: changelog.Truncate, Table: changelog.Table{Namespace: "db", Name: "t"}, TxnID: "tx", TxnEnd: true},
		{Kind: changelog.Truncate, Table: changelog.Table{Name: "plain"}},
		{Kind: changelog.Delete, Table: changelog.Table{Namespace: "db", Name: "t"}, Before: row("id", changelog.Number("3")), TxnEnd: true},
	}
}

func TestRoundTrip(t *testing.T) {
	d := newDecoder(t)
	var buf []byte
	for _, c := range roundTripChanges() {
		var err error
		start := len(buf)
		if buf, err = Append(buf, &c); err != nil {
			t.Fatalf("Append(%#v): %v", c, err)
		}
		line := buf[start:]
		if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
			t.Fatalf("Append wrote %q, want one line", line)
		}
		cs, err := d.Decode(line, testPos)
		if err != nil || len(cs) != 1 {
			t.Fatalf("Decode(%s) = %v, %v", line, cs, err)
		}
		got := cs[0]
		got.Pos, got.Size = changelog.Position{}, 0
		if !reflect.DeepEqual(got, c) {
			t.Errorf("round trip of %s\ngot  %#v\nwant %#v", line, got, c)
		}
	}
}

// TestAppendGoValues: Go numbers, []byte text and pretty JSON are written
// in forms that decode to the same values.
func TestAppendGoValues(t *testing.T) {
	c := changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Name: "t"}, After: row(
		"i64", int64(-9223372036854775808), "i", 7, "i32", int32(-3), "u64", uint64(18446744073709551615), "u8", uint8(255),
		"f64", 0.1, "f32", float32(3.14), "big", 1e300, "tiny", 5e-324, "bytes", []byte("text"),
		"pretty", changelog.JSON("{\n  \"a\": [1, 2]\n}"),
	)}
	line, err := Append(nil, &c)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"op":"+I","table":"t","row":{"i64":-9223372036854775808,"i":7,"i32":-3,"u64":18446744073709551615,"u8":255,` +
		`"f64":0.1,"f32":3.14,"big":1e+300,"tiny":5e-324,"bytes":"text","pretty":{"a":[1,2]}}}` + "\n"
	if string(line) != want {
		t.Errorf("Append =\n%s\nwant\n%s", line, want)
	}
	if _, err := newDecoder(t).Decode(line, testPos); err != nil {
		t.Errorf("Decode: %v", err)
	}
}

func TestAppendErrors(t *testing.T) {
	ok := row("id", changelog.Number("1"))
	for _, tc := range []struct {
		name string
		c    changelog.Change
		err  string
	}{
		{"kind", changelog.Change{Kind: 0, Table: changelog.Table{Name: "t"}, After: ok}, "invalid kind"},
		{"no table", changelog.Change{Kind: changelog.Insert, After: ok}, "empty table name"},
		{"dotted namespace", changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Namespace: "a.b", Name: "t"}, After: ok}, "namespace contains '.'"},
		{"dotted name alone", changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Name: "a.t"}, After: ok}, "no namespace"},
		{"no image", changelog.Change{Kind: changelog.Delete, Table: changelog.Table{Name: "t"}, After: ok}, "empty row image"},
		{"bad number", changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Name: "t"}, After: row("n", changelog.Number("1,5"))}, "not a JSON number"},
		{"NaN", changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Name: "t"}, After: row("n", math.NaN())}, "no JSON form"},
		{"Inf", changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Name: "t"}, After: row("n", float32(math.Inf(1)))}, "no JSON form"},
		{"binary", changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Name: "t"}, After: row("b", []byte{0xff})}, "no binary type"},
		{"bad utf8", changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Name: "t"}, After: row("s", "a\xffb")}, "not valid UTF-8"},
		{"bad JSON", changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Name: "t"}, After: row("j", changelog.JSON(`{"a":`))}, "invalid JSON value"},
		{"JSON scalar", changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Name: "t"}, After: row("j", changelog.JSON(`1`))}, "object or array"},
		{"type", changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Name: "t"}, After: row("x", struct{}{})}, "unsupported value type struct {}"},
		{"duplicate", changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Name: "t"}, After: row("id", 1, "id", 2)}, `column "id" appears twice`},
		{"lengths", changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Name: "t"}, After: changelog.Row{Names: []string{"a", "b"}, Values: []changelog.Value{1}}}, "2 names but 1 values"},
		{"bad before", changelog.Change{Kind: changelog.UpdateAfter, Table: changelog.Table{Name: "t"}, After: ok, Before: row("b", math.Inf(-1))}, "before: column"},
		{"bad txn", changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Name: "t"}, After: ok, TxnID: "\xff"}, "txn:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := []byte("previous line\n")
			out, err := Append(dst, &tc.c)
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "txsink-json: encode ") {
				t.Errorf("Append error %v, want one containing %q", err, tc.err)
			}
			if string(out) != "previous line\n" {
				t.Errorf("Append returned %q on error, want dst unchanged", out)
			}
		})
	}
}

func ExampleAppend() {
	c := changelog.Change{
		Kind:   changelog.UpdateAfter,
		Table:  changelog.Table{Namespace: "inventory", Name: "orders"},
		Before: changelog.Row{Names: []string{"id"}, Values: []changelog.Value{int64(1)}},
		After:  changelog.Row{Names: []string{"id", "amount"}, Values: []changelog.Value{int64(1), changelog.Number("12.50")}},
		TxnID:  "tx-42",
	}
	line, err := Append(nil, &c)
	if err != nil {
		panic(err)
	}
	fmt.Print(string(line))
	// Output:
	// {"op":"+U","table":"inventory.orders","row":{"id":1,"amount":12.50},"before":{"id":1},"txn":"tx-42"}
}

// FuzzDecode: Decode never panics; it returns valid changes or a
// *format.Error; and what it returns, Append writes back so that it
// decodes the same.
func FuzzDecode(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "orders.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		f.Add(line)
	}
	for _, c := range roundTripChanges() {
		line, err := Append(nil, &c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(line)
	}
	f.Add([]byte(`{"op":"+U","table":"a.b","row":{"x":"\ud800"},"before":null,"txn":null,"txn_end":null}`))
	d := newDecoder(f)
	pos := changelog.Position{Partition: "fuzz", Offset: 9, Seq: 2}
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := d.Decode(data, pos)
		decodetest.Text(t, data, cs)
		if err != nil {
			var fe *format.Error
			if !errors.As(err, &fe) || fe.Pos != pos || fe.Reason == "" || fe.Hint == "" || cs != nil {
				t.Fatalf("error %#v (%T) with changes %v", err, err, cs)
			}
			return
		}
		if len(cs) > 1 {
			t.Fatalf("%d changes from one line", len(cs))
		}
		for _, c := range cs {
			switch c.Kind {
			case changelog.Insert, changelog.UpdateBefore, changelog.UpdateAfter, changelog.Delete, changelog.Truncate:
			default:
				t.Fatalf("invalid kind %v", c.Kind)
			}
			if c.Table.Name == "" || c.Pos != pos || c.Image().IsZero() != (c.Kind == changelog.Truncate) {
				t.Fatalf("bad change %#v", c)
			}
			line, err := Append(nil, &c)
			if err != nil {
				t.Fatalf("Append of a decoded change: %v", err)
			}
			again, err := d.Decode(line, pos)
			if err != nil || len(again) != 1 {
				t.Fatalf("Decode(Append(c)) = %v, %v", again, err)
			}
			again[0].Size = c.Size
			if !reflect.DeepEqual(normalizeJSON(t, again[0]), normalizeJSON(t, c)) {
				t.Fatalf("round trip\n%#v\n%#v", again[0], c)
			}
		}
	})
}

// normalizeJSON compacts the JSON values of c, which Append compacts.
func normalizeJSON(t *testing.T, c changelog.Change) changelog.Change {
	t.Helper()
	for _, r := range []*changelog.Row{&c.Before, &c.After} {
		vals := append([]changelog.Value(nil), r.Values...)
		for i, v := range vals {
			if j, ok := v.(changelog.JSON); ok {
				line, err := appendValue(nil, j)
				if err != nil {
					t.Fatalf("compact %s: %v", j, err)
				}
				vals[i] = changelog.JSON(line)
			}
		}
		r.Values = vals
	}
	return c
}

// BenchmarkDecode decodes an update line, bare and with the "types"
// member the postgres source writes on every line (typed): what declaring
// the table costs a line whose types were seen before.
func BenchmarkDecode(b *testing.B) {
	c := changelog.Change{Kind: changelog.UpdateAfter, Table: changelog.Table{Namespace: "inventory", Name: "orders"},
		Before: row("id", changelog.Number("1001")),
		After: row("id", changelog.Number("1001"), "customer", "Sally Thomas", "amount", changelog.Number("12345.67"),
			"status", "shipped", "created", "2024-02-29 12:00:00.123456", "note", nil, "tags", changelog.JSON(`["gift","express"]`)),
		TxnID: "571:53195832"}
	types, err := AppendTypes(nil, &Types{Dialect: DialectPostgres, Key: []string{"id"}, NotNull: []string{"id"},
		Columns: []TypedColumn{{"id", "bigint"}, {"customer", "text"}, {"amount", "numeric(12,2)"}, {"status", "character varying(20)"},
			{"created", "timestamp without time zone"}, {"note", "text"}, {"tags", "jsonb"}}})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		types []byte
	}{{"bare", nil}, {"typed", types}} {
		b.Run(tc.name, func(b *testing.B) {
			line, err := AppendTyped(nil, &c, tc.types)
			if err != nil {
				b.Fatal(err)
			}
			d := newDecoder(b)
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				if _, err := d.Decode(line, testPos); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAppend(b *testing.B) {
	c := roundTripChanges()[0]
	line, _ := Append(nil, &c)
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		var err error
		if buf, err = Append(buf[:0], &c); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDecodeDoesNotRetainInput: the file source lends its read buffer to
// Decode and Kafka clients reuse theirs, so a change must not alias the
// record.
func TestDecodeDoesNotRetainInput(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "orders.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	d := newDecoder(t)
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		pos := changelog.Position{Partition: "orders.jsonl", Seq: int64(i + 1)}
		want, err := d.Decode(line, pos)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		buf := bytes.Clone(line)
		got, err := d.Decode(buf, pos)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		for j := range buf {
			buf[j] = 'x'
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("line %d changed with the input buffer:\n got %#v\nwant %#v", i+1, got, want)
		}
	}
}
