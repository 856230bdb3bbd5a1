// Package decodetest holds the checks every format's tests share.
package decodetest

import (
	"fmt"
	"reflect"
	"testing"

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
