package reduce

import (
	"bytes"
	"testing"

	"github.com/txsink/txsink/schema"
)

// TestIntKey: a key of exact Int columns only is encoded by appendIntKey,
// without appendKey's choices per column, to the very bytes appendKey's
// general loop writes; a value that is not an int64 all the same goes to
// that loop. Tables with another key column never take appendIntKey.
func TestIntKey(t *testing.T) {
	one := &schema.Table{Name: "one", PrimaryKey: []string{"id"}, Columns: []schema.Column{
		{Name: "id", Class: schema.Int, Bits: 64}, {Name: "v", Class: schema.String}}}
	two := &schema.Table{Name: "two", PrimaryKey: []string{"a", "b"}, Columns: []schema.Column{
		{Name: "b", Class: schema.Int, Bits: 32}, {Name: "a", Class: schema.Int, Bits: 64}, {Name: "v", Class: schema.String}}}
	mixed := &schema.Table{Name: "mixed", PrimaryKey: []string{"a", "s"}, Columns: []schema.Column{
		{Name: "a", Class: schema.Int, Bits: 64}, {Name: "s", Class: schema.String}}}
	for _, tc := range []struct {
		st     *schema.Table
		intKey bool
		vals   []any // a row's values, in the table's column order
		at     []int // the key's indexes in vals
	}{
		{one, true, []any{int64(7), "x"}, []int{0}},
		{one, true, []any{int64(-1 << 63), "x"}, []int{0}},
		{one, true, []any{uint64(7), "x"}, []int{0}},
		{one, true, []any{"7", "x"}, []int{0}},
		{two, true, []any{int64(2), int64(1), "x"}, []int{1, 0}},
		{two, true, []any{int64(2), "1", "x"}, []int{1, 0}},
		{two, true, []any{float64(2), int64(1), "x"}, []int{1, 0}},
		{mixed, false, []any{int64(1), "A"}, []int{0, 1}},
	} {
		tbl, err := NewTable(tc.st, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if tbl.intKey != tc.intKey {
			t.Errorf("%s: intKey %v", tc.st.Name, tbl.intKey)
		}
		general, err := NewTable(tc.st, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		general.intKey = false
		key := make([]any, len(tc.at))
		for i, j := range tc.at {
			key[i] = tc.vals[j]
		}
		want := appendKey([]byte("prefix"), general, tc.vals, tc.at)
		if got := appendKey([]byte("prefix"), tbl, tc.vals, tc.at); !bytes.Equal(got, want) {
			t.Errorf("%s %v at %v: %x, want %x", tc.st.Name, tc.vals, tc.at, got, want)
		}
		if got := appendKey([]byte("prefix"), tbl, key, nil); !bytes.Equal(got, want) {
			t.Errorf("%s key %v: %x, want %x", tc.st.Name, key, got, want)
		}
		if got, ok := appendIntKey([]byte("prefix"), tc.vals, tc.at); ok && !bytes.Equal(got, want) || !ok && string(got) != "prefix" {
			t.Errorf("%s %v at %v: appendIntKey gives %x, %v; want %x", tc.st.Name, tc.vals, tc.at, got, ok, want)
		}
	}
}
