package jsonscan

import (
	"fmt"
	"strings"
	"testing"
)

// TestNamesMatchByWords holds Names.find (its words for keys of up to 8
// bytes, its head and tail words for names of 9 to 16, its text for longer
// ones, and its byte-at-a-time way for a key near the input's end) to the
// plain rule: a row shares a kept list exactly when its keys, as written
// without escapes, are that list's names. Keys of every length up to 20
// are tried against names one byte shorter or longer, differing in their
// first, middle or last byte, written with an escape, and as the row's
// last key with few bytes after it.
func TestNamesMatchByWords(t *testing.T) {
	rowNames := func(names *Names, in string) []string {
		t.Helper()
		s := New([]byte(in))
		s.UseNames(names)
		r, err := s.Row()
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		return r.Names
	}
	// object writes a row of keys, each value 1; keys are written as
	// given (escapes and all).
	object := func(keys ...string) string {
		var b strings.Builder
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"%s":1`, k)
		}
		b.WriteByte('}')
		return b.String()
	}
	for n := 0; n <= 20; n++ {
		name := strings.Repeat("k", n)
		if n > 0 {
			name = name[:n-1] + "z"
		}
		type variant struct {
			key  string // as written
			same bool   // decodes to name, written plain
		}
		vs := []variant{{name, true}, {name + "k", false}}
		if n > 0 {
			vs = append(vs, variant{name[:n-1], false})
			for _, at := range []int{0, n / 2, n - 1} {
				other := []byte(name)
				other[at] = 'x'
				vs = append(vs, variant{string(other), false})
			}
			// The same name with its first byte escaped: equal once
			// decoded, but not plain, so not matched by its text.
			vs = append(vs, variant{`\u006b` + name[1:], false})
			if n == 1 {
				vs[len(vs)-1].key = `\u007a`
			}
		}
		for _, shape := range []func(k string) []string{
			func(k string) []string { return []string{k} },
			func(k string) []string { return []string{"id", k, "note"} },
			func(k string) []string { return []string{"a", "b", k} },
		} {
			var names Names
			kept := rowNames(&names, object(shape(name)...))
			for _, v := range vs {
				in := object(shape(v.key)...)
				got := rowNames(&names, in)
				shared := len(got) > 0 && &got[0] == &kept[0]
				if shared != v.same {
					t.Errorf("%s after %q: shared %v, want %v", in, kept, shared, v.same)
				}
				if v.same && fmt.Sprint(got) != fmt.Sprint(kept) {
					t.Errorf("%s: names %q, want %q", in, got, kept)
				}
				// The row's names are its keys, decoded, in every case.
				want := New([]byte(in))
				wr, err := want.Row()
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got) != fmt.Sprint(wr.Names) {
					t.Errorf("%s: names %q, want %q", in, got, wr.Names)
				}
			}
		}
	}
}

// TestNamesMatchWideRows holds Names.find to the same rule for rows of 33
// and more columns, whose members Rows keeps past its buffer, and for a
// row whose last key ends the input but for a byte.
func TestNamesMatchWideRows(t *testing.T) {
	var names Names
	wide := func(n int, last string) string {
		var b strings.Builder
		b.WriteByte('{')
		for i := range n - 1 {
			fmt.Fprintf(&b, `"column_%d":%d,`, i, i)
		}
		fmt.Fprintf(&b, `"%s":0}`, last)
		return b.String()
	}
	for _, n := range []int{1, 31, 32, 33, 40} {
		for _, last := range []string{"a", "ab", "abcdefgh", "abcdefghi", "abcdefghijklmnopqr"} {
			first := New([]byte(wide(n, last)))
			first.UseNames(&names)
			a, err := first.Row()
			if err != nil {
				t.Fatal(err)
			}
			again := New([]byte(wide(n, last)))
			again.UseNames(&names)
			b, err := again.Row()
			if err != nil {
				t.Fatal(err)
			}
			if &a.Names[0] != &b.Names[0] {
				t.Errorf("%d columns, last %q: names not shared", n, last)
			}
			other := New([]byte(wide(n, last+"x")))
			other.UseNames(&names)
			c, err := other.Row()
			if err != nil {
				t.Fatal(err)
			}
			if &c.Names[0] == &a.Names[0] || c.Names[n-1] != last+"x" {
				t.Errorf("%d columns, last %q: names %q", n, last, c.Names[n-1])
			}
		}
	}
}
