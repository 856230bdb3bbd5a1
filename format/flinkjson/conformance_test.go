package flinkjson

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/internal/flinkrow"
)

// conformanceDir holds the third-party fixtures (see its README.md). It
// lives in the shared workspace next to the repository, not in it.
const conformanceDir = "../../../shared/conformance/changelog-json"

// fixture reads a file of the conformance folder. When the folder is absent
// (a checkout without the shared workspace) the test is skipped, except in
// CI (CI=true), where the fixtures must be present.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	if _, err := os.Stat(conformanceDir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("conformance fixtures not found at %s, and CI=true requires them: %v", conformanceDir, err)
		}
		t.Skipf("conformance fixtures not found at %s (they live in the shared workspace beside the repo): %v", conformanceDir, err)
	}
	data, err := os.ReadFile(filepath.Join(conformanceDir, name))
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	return data
}

func newDecoder(t testing.TB, opts format.Options) *Decoder {
	t.Helper()
	d, err := New(opts)
	if err != nil {
		t.Fatalf("New(%v): %v", opts, err)
	}
	return d
}

// decodeLines decodes a fixture line by line, as a file source would,
// skipping lines that do not start with '{' (license headers, blank lines),
// and checks the position and size every change gets.
func decodeLines(t *testing.T, d *Decoder, name string, data []byte) []changelog.Change {
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
			if c.Pos != pos || c.Size != len(line)/len(cs) {
				t.Fatalf("%s:%d: Pos, Size = %v, %d; want %v, %d", name, i+1, c.Pos, c.Size, pos, len(line)/len(cs))
			}
		}
		changes = append(changes, cs...)
	}
	return changes
}

// TestConformanceFlink decodes flink-cdc's changelog-json fixture and
// compares the changelog with the one its ChangelogJsonSerDeTest asserts.
func TestConformanceFlink(t *testing.T) {
	const name = "changelog-json-data.txt"
	d := newDecoder(t, format.Options{OptionTable: "inventory.products"})
	changes := decodeLines(t, d, name, fixture(t, name))
	var got []string
	for _, c := range changes {
		if c.Table != (changelog.Table{Namespace: "inventory", Name: "products"}) {
			t.Errorf("%v: table %#v, want inventory.products", c.Pos, c.Table)
		}
		lines, err := flinkrow.Lines(c)
		if err != nil {
			t.Fatalf("%v: %v", c.Pos, err)
		}
		got = append(got, lines...)
	}
	want := flinkrow.ExpectedLines(string(fixture(t, name+".expected.txt")))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changelog differs from the peer's\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
