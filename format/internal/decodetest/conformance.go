package decodetest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
)

// Fixture reads the file name of the conformance folder dir (third-party
// fixtures kept in the shared workspace beside the repository, not in it).
// When the folder is absent (a checkout without the shared workspace) the
// test is skipped, except in CI (CI=true), where the fixtures must be
// present and their absence fails the test.
func Fixture(t testing.TB, dir, name string) []byte {
	t.Helper()
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("conformance fixtures not found at %s, and CI=true requires them: %v", dir, err)
		}
		t.Skipf("conformance fixtures not found at %s (they live in the shared workspace beside the repo): %v", dir, err)
	}
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	return data
}

// DecodeLines decodes a fixture line by line, as a file source would,
// skipping lines that do not start with '{' (license headers, blank lines),
// and checks the position and size every change gets: Pos is the line's
// (partition name, offset past its newline, 1-based line number), Size is
// the line's length shared among its changes. A decode error fails the test.
func DecodeLines(t *testing.T, d format.Decoder, name string, data []byte) []changelog.Change {
	t.Helper()
	var changes []changelog.Change
	var offset int64
	for i, line := range bytes.Split(data, []byte("\n")) {
		offset += int64(len(line)) + 1
		if !bytes.HasPrefix(line, []byte("{")) {
			continue
		}
		pos := changelog.Position{Partition: name, Offset: offset, Seq: int64(i + 1)}
		cs, err := d.Decode(line, pos)
		if err != nil {
			t.Fatalf("%s:%d: %v", name, i+1, err)
		}
		for _, c := range cs {
			if c.Pos != pos || int(c.Size) != len(line)/len(cs) {
				t.Fatalf("%s:%d: Pos, Size = %v, %d; want %v, %d", name, i+1, c.Pos, c.Size, pos, len(line)/len(cs))
			}
		}
		changes = append(changes, cs...)
	}
	return changes
}

// RowEvents returns the changes of cs that are row events, and how many
// were records appliers skip (changelog.Kind.Skipped: schema changes,
// logical decoding messages), which a peer's changelog does not list.
func RowEvents(cs []changelog.Change) (rows []changelog.Change, skipped int) {
	for _, c := range cs {
		if c.Kind.Skipped() {
			skipped++
			continue
		}
		rows = append(rows, c)
	}
	return rows, skipped
}

// SkippedChange checks c, a change of a record appliers skip: no row
// image, no transaction, at pos.
func SkippedChange(t *testing.T, c changelog.Change, pos changelog.Position) {
	t.Helper()
	if !c.Before.IsZero() || !c.After.IsZero() || c.TxnID != "" || c.TxnEnd || c.Pos != pos {
		t.Fatalf("bad %v change %+v", c.Kind, c)
	}
}

// SchemaChanges decodes the records of the file at path (DecodeLines) and
// checks that each is one row-less changelog.SchemaChange change (see
// SkippedChange) naming want[i], its table or its database alone.
func SchemaChanges(t *testing.T, d format.Decoder, path string, want []changelog.Table) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	changes := DecodeLines(t, d, filepath.Base(path), data)
	if len(changes) != len(want) {
		t.Fatalf("%d changes, want %d", len(changes), len(want))
	}
	for i, c := range changes {
		if c.Kind != changelog.SchemaChange || c.Table != want[i] {
			t.Errorf("line %d: kind %v, table %#v; want DDL, %#v", c.Pos.Seq, c.Kind, c.Table, want[i])
		}
		SkippedChange(t, c, c.Pos)
	}
}

// SameSet reports whether got and want hold the same lines, each as often,
// in any order.
func SameSet(got, want []string) bool {
	w := append([]string(nil), want...)
	if len(got) != len(w) {
		return false
	}
	for _, g := range got {
		found := false
		for i, x := range w {
			if x == g {
				w = append(w[:i], w[i+1:]...)
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// New returns the decoder newDecoder makes with opts, failing the test
// (naming the options) when it refuses them.
func New[D any](t testing.TB, newDecoder func(format.Options) (D, error), opts format.Options) D {
	t.Helper()
	d, err := newDecoder(opts)
	if err != nil {
		t.Fatalf("New(%v): %v", opts, err)
	}
	return d
}
