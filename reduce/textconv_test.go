package reduce

import (
	"reflect"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/coerce"
	"github.com/txsink/txsink/schema"
)

// TestTextConversions: convertRow copies the text of String and Decimal
// columns into the row's memory itself (convText, convDecimal) when
// coerce.Text or coerce.DecimalText says coerce.Value would return it as
// it is; every other value goes to coerce.Value. Either way the buffered
// value is Value's, of Value's type, and a refusal is Value's, worded as
// Check words it (Check converts every value with Value).
func TestTextConversions(t *testing.T) {
	st := &schema.Table{Name: "texts", PrimaryKey: []string{"id"}, Columns: []schema.Column{
		{Name: "id", Class: schema.Int, Bits: 64},
		{Name: "s", Class: schema.String, Length: 4},
		{Name: "sb", Class: schema.String, Length: 4, LengthInBytes: true},
		{Name: "big", Class: schema.String},
		{Name: "d", Class: schema.Decimal, Precision: 5, Scale: 2},
		{Name: "d0", Class: schema.Decimal},
		{Name: "dn", Class: schema.Decimal, Precision: 3, Scale: -1},
		{Name: "n", Class: schema.String, Length: 8, Nullable: true},
	}}
	tbl, err := NewTable(st, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	good := map[string]changelog.Value{"s": "abcd", "sb": "ab", "big": "x", "d": changelog.Number("1.50"), "d0": "12", "dn": changelog.Number("10"), "n": "ok"}
	long := strings.Repeat("long text ", 200) // more than a row's share of a block
	for _, tc := range []struct {
		col  string
		vals []changelog.Value
	}{
		{"s", []changelog.Value{"", "a", "abcd", "abcde", "éééé", "ééééé", "\xff", "a\xffb", changelog.Number("12"), changelog.Number("12345"), int64(5), true, []byte("ab"), changelog.JSON(`"x"`), nil}},
		{"sb", []changelog.Value{"abcd", "éé", "ééé", "abcde", changelog.Number("1")}},
		{"big", []changelog.Value{long, long + "\xff", "short", strings.Repeat("€", 300)}},
		{"d", []changelog.Value{changelog.Number("1.5"), changelog.Number("123.45"), changelog.Number("-123.45"), "1.50", changelog.Number("001.5"),
			changelog.Number("1234.5"), changelog.Number("1.234"), changelog.Number("1.230"), changelog.Number("1e2"), changelog.Number("-0.00"), changelog.Number("-0"),
			changelog.Number("0.5"), changelog.Number(".5"), changelog.Number("5."), changelog.Number("+5"), changelog.Number(""), "abc", "AJw=",
			int64(7), float64(1.25), nil}},
		{"d0", []changelog.Value{changelog.Number("123456789012345678901234567890.123"), changelog.Number(strings.Repeat("9", 1500)), "0", "-0", changelog.Number("NaN"), "1.0"}},
		{"dn", []changelog.Value{changelog.Number("10"), changelog.Number("1"), "120"}},
		{"n", []changelog.Value{nil, "x", "123456789", changelog.Number("7")}},
	} {
		col, _ := st.Column(tc.col)
		for _, v := range tc.vals {
			var names []string
			var vals []changelog.Value
			names, vals = append(names, "id"), append(vals, changelog.Number("1"))
			for _, c := range st.Columns[1:] {
				names = append(names, c.Name)
				if c.Name == tc.col {
					vals = append(vals, v)
				} else {
					vals = append(vals, good[c.Name])
				}
			}
			c := changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Name: "texts"}, Pos: changelog.Position{Partition: "p0", Offset: 1, Seq: 1},
				After: changelog.Row{Names: names, Values: vals}}
			want, wantErr := coerce.Value(col, v)
			// A first row, so that the buffer's row memory has a block,
			// which the values are written into as they are converted.
			buf := NewBuffer("texts")
			first := c
			first.After.Values = append([]changelog.Value{changelog.Number("0")}, vals[1:]...)
			for i, name := range names[1:] {
				first.After.Values[i+1] = good[name]
			}
			if err := buf.Add(tbl, &first, t0); err != nil {
				t.Fatal(err)
			}
			before := buf.Bytes()
			checkErr := buf.Check(tbl, &c)
			addErr := buf.Add(tbl, &c, t0)
			if (wantErr != nil) != (addErr != nil) || addErr != nil && (checkErr == nil || addErr.Error() != checkErr.Error()) {
				t.Errorf("%s = %#v: Add: %v, Check: %v, coerce.Value: %v", tc.col, v, addErr, checkErr, wantErr)
				continue
			}
			if addErr != nil {
				if buf.Rows() != 1 || buf.Bytes() != before {
					t.Errorf("%s = %#v: refused, yet the buffer holds %d rows, %d bytes (%d before)", tc.col, v, buf.Rows(), buf.Bytes(), before)
				}
				continue
			}
			size := buf.Bytes() - before
			g := buf.Take().Batches[0].Upserts[0]
			if got := g.Rows[1][indexOf(g.Columns, tc.col)]; !reflect.DeepEqual(got, want) {
				t.Errorf("%s = %#v: buffered %#v (%T), coerce.Value gives %#v (%T)", tc.col, v, got, got, want, want)
			}
			// The entry's size: its row's bytes, its key's 8 and the
			// bookkeeping (see Bytes).
			if want := int64(rowBytes(g.Rows[1]) + keyedEntryBytes + 8); size != want {
				t.Errorf("%s = %#v: the buffer counts %d bytes, want %d", tc.col, v, size, want)
			}
		}
	}
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}
