package canal

import (
	"regexp"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/internal/decodetest"
	"github.com/txsink/txsink/format/internal/flinkrow"
)

// conformanceDir holds the third-party fixtures (see its README.md). It
// lives in the shared workspace next to the repository, not in it.
const conformanceDir = "../../../shared/conformance/canal"

// fixture reads a file of the conformance folder (decodetest.Fixture).
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	return decodetest.Fixture(t, conformanceDir, name)
}

func newDecoder(t testing.TB, opts format.Options) *Decoder {
	t.Helper()
	return decodetest.New(t, New, opts)
}

// flinkLines prints changes as Flink's RowData text, checking every update
// carries its Before image.
func flinkLines(t *testing.T, changes []changelog.Change) []string {
	t.Helper()
	var got []string
	for _, c := range changes {
		if c.Kind == changelog.UpdateAfter && c.Before.IsZero() {
			t.Errorf("%v: update without a Before image", c.Pos)
		}
		lines, err := flinkrow.Lines(c)
		if err != nil {
			t.Fatalf("%v: %v", c.Pos, err)
		}
		got = append(got, lines...)
	}
	return got
}

func compare(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changelog differs from the peer's\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestConformanceFlink decodes Flink's canal-json fixture and compares the
// changelog with the one Flink's CanalJsonSerDeSchemaTest asserts.
func TestConformanceFlink(t *testing.T) {
	const name = "canal-data.txt"
	changes, ddl := decodetest.RowEvents(decodetest.DecodeLines(t, newDecoder(t, nil), name, fixture(t, name)))
	if ddl != 1 {
		t.Errorf("%d schema changes, want 1 (the CREATE TABLE of line 10)", ddl)
	}
	for _, c := range changes {
		if c.Table != (changelog.Table{Namespace: "inventory", Name: "products2"}) {
			t.Errorf("%v: table %#v, want inventory.products2", c.Pos, c.Table)
		}
		for _, v := range append(append([]changelog.Value(nil), c.Before.Values...), c.After.Values...) {
			if _, ok := v.(string); !ok && v != nil {
				t.Errorf("%v: value %#v (%T), want every value kept as the string Canal sent", c.Pos, v, v)
			}
		}
	}
	if len(changes) == 0 || changes[0].Pos.Seq != 1 || len(changes) < 9 || changes[8].Pos.Seq != 1 || changes[9].Pos.Seq != 2 {
		t.Errorf("line 1 does not give the first 9 changes")
	}
	compare(t, flinkLines(t, changes), flinkrow.ExpectedLines(string(fixture(t, name+".expected.txt"))))
}

// TestConformanceFilterTable decodes the mixed-table fixture whole (DDL
// messages included), keeps the changes whose database matches ^my.* and
// table ^prod.*, as the peer's filter does, and compares them with the
// peer's changelog.
func TestConformanceFilterTable(t *testing.T) {
	const name = "canal-data-filter-table.txt"
	d := newDecoder(t, nil)
	changes, ddl := decodetest.RowEvents(decodetest.DecodeLines(t, d, name, fixture(t, name)))
	if ddl != 2 {
		t.Errorf("%d schema changes, want 2 (the two CREATE TABLE messages)", ddl)
	}
	dbRE, tableRE := regexp.MustCompile(`^my.*`), regexp.MustCompile(`^prod.*`)
	var kept []changelog.Change
	tables := map[string]int{}
	for _, c := range changes {
		tables[c.Table.String()]++
		if dbRE.MatchString(c.Table.Namespace) && tableRE.MatchString(c.Table.Name) {
			kept = append(kept, c)
		}
	}
	if tables["mydb.orders"] == 0 || tables["mydb.project"] == 0 {
		t.Errorf("changes per table %v, want rows of mydb.orders and mydb.project too", tables)
	}
	compare(t, flinkLines(t, kept), flinkrow.ExpectedLines(string(fixture(t, name+".expected.txt"))))
}
