package ogg

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
const conformanceDir = "../../../shared/conformance/ogg"

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

// TestConformanceFlink decodes Flink's ogg-json fixture and compares the
// changelog with the one Flink's OggJsonSerDeSchemaTest asserts.
func TestConformanceFlink(t *testing.T) {
	const name = "ogg-data.txt"
	changes := decodeLines(t, newDecoder(t, nil), name, fixture(t, name))
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
				for _, c := range decodeLines(t, d, name, fixture(t, name)) {
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
				if !sameSet(got, want) {
					t.Errorf("after %s the table is\n%s\nwant\n%s", file, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
		})
	}
}

// sameSet reports whether got (sorted) and want hold the same lines, in any
// order.
func sameSet(got, want []string) bool {
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
