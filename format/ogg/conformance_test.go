package ogg

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
const conformanceDir = "../../../shared/conformance/ogg"

// fixture reads a file of the conformance folder (decodetest.Fixture).
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	return decodetest.Fixture(t, conformanceDir, name)
}

func newDecoder(t testing.TB, opts format.Options) *Decoder {
	t.Helper()
	return decodetest.New(t, New, opts)
}

// TestConformanceFlink decodes Flink's ogg-json fixture and compares the
// changelog with the one Flink's OggJsonSerDeSchemaTest asserts.
func TestConformanceFlink(t *testing.T) {
	const name = "ogg-data.txt"
	changes := decodetest.DecodeLines(t, newDecoder(t, nil), name, fixture(t, name))
	var got []string
	for _, c := range changes {
		if c.Table != (changelog.Table{Namespace: "OGG", Name: "TBL_TEST"}) {
			t.Errorf("%v: table %#v, want OGG.TBL_TEST", c.Pos, c.Table)
		}
		if c.Kind == changelog.UpdateAfter && c.Before.IsZero() {
			t.Errorf("%v: update without a Before image", c.Pos)
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

// TestConformancePaimonState applies Paimon's OGG cases file by file with
// primary key id and compares the table with the state Paimon asserts after
// each file.
func TestConformancePaimonState(t *testing.T) {
	for _, tc := range []struct {
		dir   string
		files []string
		table changelog.Table
	}{
		{"paimon-schemaevolution", []string{"ogg-data-1.txt", "ogg-data-2.txt", "ogg-data-3.txt"}, changelog.Table{Namespace: "OGG", Name: "TBL_TEST"}},
		{"paimon-event", []string{"event-insert.txt", "event-update.txt", "event-delete.txt"}, changelog.Table{Namespace: "OGG", Name: "EVENT"}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			d := newDecoder(t, nil)
			table := flinkrow.NewTable("id")
			for _, file := range tc.files {
				name := tc.dir + "/" + file
				for _, c := range decodetest.DecodeLines(t, d, name, fixture(t, name)) {
					if c.Table != tc.table {
						t.Fatalf("%v: table %v, want %v", c.Pos, c.Table, tc.table)
					}
					if err := table.Apply(c); err != nil {
						t.Fatalf("%v: %v", c.Pos, err)
					}
				}
				got, err := table.Lines(flinkrow.SchemaColumns(string(fixture(t, name+".schema.txt"))))
				if err != nil {
					t.Fatal(err)
				}
				want := flinkrow.ExpectedLines(string(fixture(t, name+".state.expected.txt")))
				if !decodetest.SameSet(got, want) {
					t.Errorf("after %s the table is\n%s\nwant\n%s", file, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
		})
	}
}
