package decodetest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
)

// FixtureSeeds returns the records of the conformance folder dir to start
// fuzzing from: every line starting with '{' of its *.txt files and of the
// files one folder down, and, with wholeJSON, each *.json file one folder
// down whole (a record pretty-printed over several lines). An absent folder
// gives no seeds: fuzzing then starts from the format's own edge cases.
func FixtureSeeds(dir string, wholeJSON bool) [][]byte {
	var seeds [][]byte
	files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	more, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
	for _, name := range append(files, more...) {
		data, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		if wholeJSON && filepath.Ext(name) == ".json" {
			seeds = append(seeds, data)
			continue
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			if bytes.HasPrefix(line, []byte("{")) {
				seeds = append(seeds, line)
			}
		}
	}
	return seeds
}

// FuzzDecode is the body every format's fuzz target shares: it decodes data
// with dec at pos and checks that the arena path agrees (SameInArena), the
// text is sound (Text), the input is not modified, and an error is a
// complete *format.Error of format name (position, reason, hint) with no
// changes. It returns the changes and whether decoding succeeded, so that
// the caller checks its format's own invariants on them.
func FuzzDecode(t *testing.T, dec format.ArenaDecoder, mem *changelog.Arena, name string, data []byte, pos changelog.Position) ([]changelog.Change, bool) {
	t.Helper()
	in := append([]byte(nil), data...)
	cs, err := dec.Decode(data, pos)
	SameInArena(t, dec, mem, data, pos, cs, err)
	Text(t, data, cs)
	if !bytes.Equal(in, data) {
		t.Fatal("Decode modified its input")
	}
	if err != nil {
		var fe *format.Error
		if !errors.As(err, &fe) {
			t.Fatalf("error %v (%T) is not a *format.Error", err, err)
		}
		if fe.Pos != pos || fe.Format != name || fe.Reason == "" || fe.Hint == "" || cs != nil {
			t.Fatalf("incomplete error %#v with changes %v", fe, cs)
		}
		return nil, false
	}
	return cs, true
}

// BenchmarkDecode measures d decoding the record r again and again, in
// bytes per second and allocations; r must decode without error.
func BenchmarkDecode(b *testing.B, d format.Decoder, r []byte) {
	b.Helper()
	pos := changelog.Position{Partition: "bench", Seq: 1}
	if _, err := d.Decode(r, pos); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(r)))
	for b.Loop() {
		if _, err := d.Decode(r, pos); err != nil {
			b.Fatal(err)
		}
	}
}

// Rows checks the row images of c: as many names as values, and each value
// of a type the changelog carries from JSON (nil, bool, changelog.Number,
// string, changelog.JSON), or []byte too where binaryOK (a format that
// decodes binary columns, as Debezium's bytes fields).
func Rows(t *testing.T, c changelog.Change, binaryOK bool) {
	t.Helper()
	for _, r := range []changelog.Row{c.Before, c.After} {
		if len(r.Names) != len(r.Values) {
			t.Fatalf("row with %d names and %d values", len(r.Names), len(r.Values))
		}
		for _, v := range r.Values {
			switch v.(type) {
			case nil, bool, changelog.Number, string, changelog.JSON:
			case []byte:
				if !binaryOK {
					t.Fatalf("value %#v of type %T", v, v)
				}
			default:
				t.Fatalf("value %#v of type %T", v, v)
			}
		}
	}
}
