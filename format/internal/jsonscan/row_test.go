package jsonscan

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
)

// TestRowsChange builds changes from two scanned rows of many widths, on
// either side of Rows' member buffer and of alloc's size classes, near
// and far apart in the input, and checks them against Row's: each row
// whole, the rows not sharing room to append into, nothing pointing into
// the input, and all of it surviving a collection.
func TestRowsChange(t *testing.T) {
	object := func(n, seed int) string {
		var b []byte
		for i := range n {
			if i > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, `"c%d":`, i)
			switch (i + seed) % 6 {
			case 0:
				b = fmt.Appendf(b, "%d.5", i+seed)
			case 1:
				b = fmt.Appendf(b, `"s%d"`, i*seed)
			case 2:
				b = append(b, `"e\u00e9\n"`...)
			case 3:
				b = append(b, "null"...)
			case 4:
				b = append(b, "true"...)
			case 5:
				b = fmt.Appendf(b, `{"k":[%d]}`, seed)
			}
		}
		return "{" + string(b) + "}"
	}
	rowOf := func(text string) changelog.Row {
		s := New([]byte(text))
		r, err := s.Row()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var names Names
	for _, nb := range []int{0, 1, 5, 6, 7, 16, 17, 31, 32, 33, 40, 64, 65} {
		for _, na := range []int{0, 1, 6, 26, 33, 64} {
			for _, gap := range []int{0, 200} {
				if nb+na == 0 {
					continue
				}
				bt, at := object(nb, 1), object(na, 2)
				data := []byte(bt + strings.Repeat(" ", gap) + at)
				s := New(data)
				s.UseNames(&names)
				var rs Rows
				var pb, pa Pending
				if err := s.ScanRow(&rs, &pb); err != nil {
					t.Fatal(err)
				}
				if err := s.ScanRow(&rs, &pa); err != nil {
					t.Fatal(err)
				}
				before, after := &pb, &pa
				if nb == 0 {
					before = nil
				}
				if na == 0 {
					after = nil
				}
				cs := rs.Change(data, before, after)
				for i := range data {
					data[i] = 'x'
				}
				runtime.GC()
				c := cs[0]
				if len(cs) != 1 || !reflect.DeepEqual(c.Before, rowOf(bt)) && nb > 0 || !reflect.DeepEqual(c.After, rowOf(at)) && na > 0 {
					t.Fatalf("%d/%d/%d: change\n%#v\nwant before %s, after %s", nb, na, gap, c, bt, at)
				}
				if nb == 0 && !c.Before.IsZero() || na == 0 && !c.After.IsZero() {
					t.Fatalf("%d/%d/%d: an absent row is not zero: %#v", nb, na, gap, c)
				}
				if cap(c.Before.Values) != len(c.Before.Values) {
					t.Fatalf("%d/%d/%d: before's values have room to append into the after's", nb, na, gap)
				}
			}
		}
	}
}

// TestScanRowOf reads rows for two of their columns: the row holds those
// alone, in the object's order, named and valued as Row names and values
// them, whatever the spelling of the members (compact, white space, an
// escaped key, a key that ends as a wanted one does); a refusal in a
// member passed over names that member's column, as Row's does.
func TestScanRowOf(t *testing.T) {
	keys := NewKeys("id", "k2")
	for _, tc := range []struct {
		text, want, err string
	}{
		{`{"id":7,"a":"x","k2":"y"}`, `[id k2] [7 y]`, ""},
		{`{"a":{"b":[1,"c"]},"k2":true,"id":-1.5e3}`, `[k2 id] [true -1.5e3]`, ""},
		{`{ "id" : 7 , "a" : 1 }`, `[id] [7]`, ""},
		{`{"\u0069d":7,"x\"id":8,"xid":9}`, `[id] [7]`, ""},
		{`{"a":1}`, `[] []`, ""},
		{`{}`, `[] []`, ""},
		{`{"id":1,"id":2}`, "", `duplicate column "id"`},
		{`{"id":1,"a":"b` + "\xff" + `"}`, "", `column "a"`},
		{`{"id":1,"a":[true,"` + "\xff" + `"]}`, "", `column "a"`},
		{`{"id":1,"a":{"b":"` + "\xff" + `"}}`, "", `column "a"`},
		{`{"id":1,"a":{"b":{"c":[{"d":"x` + "\xff" + `"}]}},"k2":1}`, "", `column "a"`},
		{`{"id":1,"a":{"b` + "\xff" + `":1}}`, "", `column "a"`},
		{`{"id":1,"a` + "\xff" + `":1}`, "", "invalid UTF-8"},
		{`{"id":1,"a":tru}`, "", "invalid JSON"},
	} {
		s := New([]byte(tc.text))
		var rs Rows
		var p Pending
		err := s.ScanRowOf(&rs, &p, &keys)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one holding %q", tc.text, err, tc.err)
			}
			if se, ok := err.(*SyntaxError); ok && se.BadText && !strings.Contains(tc.err, "column") && se.Column != "" {
				t.Errorf("%s: error names column %q, want none (the key is the bad text)", tc.text, se.Column)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.text, err)
			continue
		}
		r := rs.Row([]byte(tc.text), &p)
		if got := fmt.Sprintf("%v %v", r.Names, r.Values); got != tc.want {
			t.Errorf("%s: row %v %v, want %s", tc.text, r.Names, r.Values, tc.want)
		}
		if s.Pos() != len(tc.text) {
			t.Errorf("%s: stopped at %d, want the object's end", tc.text, s.Pos())
		}
	}
}
