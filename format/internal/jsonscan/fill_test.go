package jsonscan

import (
	"reflect"
	"testing"

	"github.com/txsink/txsink/changelog"
)

// TestFillRowKinds holds fillRow's two loops to the changelog.Value rules:
// the scalars of compact rows (fillRow's loop) and escaped strings,
// objects and arrays (fillHard) in every order and mix, general-way
// members (white space) among them, in the heap and in an arena.
func TestFillRowKinds(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []changelog.Value
	}{
		{`{"a":1,"b":"x","c":null,"d":true,"e":false}`, []changelog.Value{changelog.Number("1"), "x", nil, true, false}},
		{`{"a":"e\u00e9","b":2.5}`, []changelog.Value{"eé", changelog.Number("2.5")}},
		{`{"a":2.5,"b":"e\u00e9"}`, []changelog.Value{changelog.Number("2.5"), "eé"}},
		{`{"a":{"k":[1]},"b":"s","c":[1,2]}`, []changelog.Value{changelog.JSON(`{"k":[1]}`), "s", changelog.JSON(`[1,2]`)}},
		{`{"a":"\n","b":"\"q\"","c":"","d":-0}`, []changelog.Value{"\n", `"q"`, "", changelog.Number("-0")}},
		{`{ "a" : "x" , "b" : "y\ty" , "c" : [ ] , "d" : 1e3 }`, []changelog.Value{"x", "y\ty", changelog.JSON(`[ ]`), changelog.Number("1e3")}},
		{`{"a":[],"b":{},"c":true}`, []changelog.Value{changelog.JSON(`[]`), changelog.JSON(`{}`), true}},
	} {
		for _, mem := range []*changelog.Arena{nil, new(changelog.Arena)} {
			var rs Rows
			var p Pending
			data := []byte(c.in)
			s := New(data)
			if err := s.ScanRow(&rs, &p); err != nil {
				t.Fatalf("%s: %v", c.in, err)
			}
			row := rs.RowIn(mem, data, &p)
			if !reflect.DeepEqual(row.Values, c.want) {
				t.Errorf("%s (arena %v): %#v, want %#v", c.in, mem != nil, row.Values, c.want)
			}
			for i := range data {
				data[i] = 'X' // the row must not share the input's memory
			}
			if !reflect.DeepEqual(row.Values, c.want) {
				t.Errorf("%s (arena %v): %#v after the input changed", c.in, mem != nil, row.Values)
			}
		}
	}
}

// TestChangeInOneRow holds ChangeIn's one-row way (an after image alone,
// its text copied without rowTexts) and its two-row way to Change: the same
// rows, in an arena, none sharing the input.
func TestChangeInOneRow(t *testing.T) {
	const bt, at = `{"id":1,"s":"a\tb","o":{"k":1}}`, `{"id":1,"s":"c","n":null,"t":true}`
	for _, c := range []struct{ before, after bool }{{false, true}, {true, false}, {true, true}} {
		data := []byte(bt + `,"after":` + at)
		var rs Rows
		var pb, pa Pending
		s := New(data)
		if err := s.ScanRow(&rs, &pb); err != nil {
			t.Fatal(err)
		}
		s.Skip(len(`,"after":`))
		if err := s.ScanRow(&rs, &pa); err != nil {
			t.Fatal(err)
		}
		before, after := &pb, &pa
		if !c.before {
			before = nil
		}
		if !c.after {
			after = nil
		}
		want := rs.Change(data, before, after)
		got := rs.ChangeIn(new(changelog.Arena), data, before, after)
		for i := range data {
			data[i] = 'X'
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("before %v, after %v: %#v, want %#v", c.before, c.after, got, want)
		}
	}
}
