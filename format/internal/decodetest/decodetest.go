// Package decodetest holds the checks every format's tests share.
package decodetest

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
)

// SameInArena checks that dec decodes data into mem (after resetting it)
// exactly as it decoded it on the heap into want and wantErr: the same
// changes and the same error. Fuzz targets call it on every input, so
// that the arena path (format.ArenaDecoder) gets all the fuzzing the heap
// path gets.
func SameInArena(t *testing.T, dec format.ArenaDecoder, mem *changelog.Arena, data []byte, pos changelog.Position, want []changelog.Change, wantErr error) {
	t.Helper()
	mem.Reset()
	got, err := dec.DecodeIn(mem, data, pos)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Fatalf("DecodeIn error %v, Decode error %v", err, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("DecodeIn\n%+v\nDecode\n%+v", got, want)
	}
}

// Text checks the text of the changes cs decoded from data: the tables,
// transaction ids, column names and string values are valid UTF-8, and
// none holds U+FFFD unless data does (raw, or escaped as \ufffd): a
// decoder never puts U+FFFD in place of what is not text, which would
// store a value the source never had. Fuzz targets call it on every input.
func Text(t *testing.T, data []byte, cs []changelog.Change) {
	t.Helper()
	replaced := bytes.Contains(data, []byte(string(utf8.RuneError))) || bytes.Contains(bytes.ToLower(data), []byte(`\ufffd`))
	check := func(what, s string) {
		t.Helper()
		if !utf8.ValidString(s) {
			t.Fatalf("%q: %s %q is not valid UTF-8", data, what, s)
		}
		if !replaced && strings.ContainsRune(s, utf8.RuneError) {
			t.Fatalf("%q: %s %q holds a U+FFFD the input does not", data, what, s)
		}
	}
	for _, c := range cs {
		check("table", c.Table.Namespace)
		check("table", c.Table.Name)
		check("transaction id", c.TxnID)
		for _, r := range []changelog.Row{c.Before, c.After} {
			for i, n := range r.Names {
				check("column name", n)
				if s, ok := r.Values[i].(string); ok {
					check("value of column "+n, s)
				}
			}
		}
	}
}
