package flinkjson

import (
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/internal/decodetest"
	"github.com/txsink/txsink/format/internal/flinkrow"
)

// conformanceDir holds the third-party fixtures (see its README.md). It
// lives in the shared workspace next to the repository, not in it.
const conformanceDir = "../../../shared/conformance/changelog-json"

// fixture reads a file of the conformance folder (decodetest.Fixture).
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	return decodetest.Fixture(t, conformanceDir, name)
}

func newDecoder(t testing.TB, opts format.Options) *Decoder {
	t.Helper()
	return decodetest.New(t, New, opts)
}

// TestConformanceFlink decodes flink-cdc's changelog-json fixture and
// compares the changelog with the one its ChangelogJsonSerDeTest asserts.
func TestConformanceFlink(t *testing.T) {
	const name = "changelog-json-data.txt"
	d := newDecoder(t, format.Options{OptionTable: "inventory.products"})
	changes := decodetest.DecodeLines(t, d, name, fixture(t, name))
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
