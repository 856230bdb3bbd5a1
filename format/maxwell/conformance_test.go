package maxwell

import (
	"reflect"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/internal/decodetest"
	"github.com/txsink/txsink/format/internal/flinkrow"
)

// conformanceDir holds the third-party fixtures (see its README.md). It
// lives in the shared workspace next to the repository, not in it.
const conformanceDir = "../../../shared/conformance/maxwell"

// fixture reads a file of the conformance folder (decodetest.Fixture).
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	return decodetest.Fixture(t, conformanceDir, name)
}

func newDecoder(t testing.TB, opts format.Options) *Decoder {
	t.Helper()
	return decodetest.New(t, New, opts)
}

// TestConformanceFlink decodes Flink's maxwell-json fixture and compares
// the changelog with the one Flink's MaxwellJsonSerDerTest asserts.
func TestConformanceFlink(t *testing.T) {
	const name = "maxwell-data.txt"
	changes := decodetest.DecodeLines(t, newDecoder(t, nil), name, fixture(t, name))
	var got []string
	for _, c := range changes {
		if c.Table != (changelog.Table{Namespace: "test", Name: "product"}) {
			t.Errorf("%v: table %#v, want test.product", c.Pos, c.Table)
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

// TestConformanceTransactions checks TxnID and TxnEnd over the fixture's
// transactions: xid 7125 holds the first 9 rows, only the last with
// "commit": true; every later row is a transaction of its own or a
// multi-row one (7291, 7322) ended by its last row.
func TestConformanceTransactions(t *testing.T) {
	const name = "maxwell-data.txt"
	changes := decodetest.DecodeLines(t, newDecoder(t, nil), name, fixture(t, name))
	if len(changes) != 20 {
		t.Fatalf("%d changes, want 20 (one per message)", len(changes))
	}
	type txn struct {
		id   string
		rows int
	}
	var got []txn
	open := false
	for i, c := range changes {
		if c.TxnID == "" {
			t.Fatalf("change %d has no TxnID", i)
		}
		if !open {
			got = append(got, txn{id: c.TxnID})
		} else if last := got[len(got)-1]; last.id != c.TxnID {
			t.Fatalf("change %d: xid %s inside transaction %s", i, c.TxnID, last.id)
		}
		got[len(got)-1].rows++
		open = !c.TxnEnd
	}
	if open {
		t.Error("the last transaction has no change with TxnEnd")
	}
	if got[0] != (txn{"7125", 9}) {
		t.Errorf("first transaction %+v, want xid 7125 with 9 rows", got[0])
	}
	if len(got) != 10 {
		t.Errorf("%d transactions %+v, want 10", len(got), got)
	}
	for _, tx := range got {
		if want := map[string]int{"7125": 9, "7291": 2, "7322": 2}[tx.id]; want != 0 && tx.rows != want {
			t.Errorf("transaction %s has %d rows, want %d", tx.id, tx.rows, want)
		}
	}
}

// TestConformanceZendesk decodes Maxwell's own deserializer fixtures and
// checks the fields RowMapDeserializerTest asserts.
func TestConformanceZendesk(t *testing.T) {
	d := newDecoder(t, nil)
	decode := func(t *testing.T, name string) changelog.Change {
		t.Helper()
		data := fixture(t, "zendesk-maxwell/"+name)
		pos := changelog.Position{Partition: name, Seq: 1}
		cs, err := d.Decode(data, pos)
		if err != nil || len(cs) != 1 {
			t.Fatalf("%s: %v, %v; want one change", name, cs, err)
		}
		c := cs[0]
		if c.Table != (changelog.Table{Namespace: "MyDatabase", Name: "User"}) || c.TxnID != "5694" || !c.TxnEnd {
			t.Errorf("%s: table %v, txn %q, end %v; want MyDatabase.User, 5694, true", name, c.Table, c.TxnID, c.TxnEnd)
		}
		return c
	}
	t.Run("insert", func(t *testing.T) {
		c := decode(t, "user-insert.json")
		want := changelog.RowOf("UserID", changelog.Number("20"), "FirstName", "Fiz", "MiddleName", nil, "LastName", "Buz",
			"DoubleField", changelog.Number("4500000001.512456777"), "Version", changelog.Number("1486703131000"))
		if c.Kind != changelog.Insert || !reflect.DeepEqual(c.After, want) {
			t.Errorf("got %v %#v, want +I %#v", c.Kind, c.After, want)
		}
	})
	t.Run("update", func(t *testing.T) {
		c := decode(t, "user-update.json")
		after := changelog.RowOf("UserID", changelog.Number("20"), "FirstName", "Fiz", "MiddleName", nil, "LastName", "Buz",
			"Version", changelog.Number("1486703131000"))
		before := changelog.RowOf("UserID", changelog.Number("20"), "FirstName", "Foo", "MiddleName", nil, "LastName", "Bar",
			"Version", changelog.Number("1486703131000"),
			"backup_date", "2017-02-08 02:00:05", "DoubleField", changelog.Number("4500000001.512456777"))
		if c.Kind != changelog.UpdateAfter || !reflect.DeepEqual(c.After, after) {
			t.Errorf("got %v %#v, want +U %#v", c.Kind, c.After, after)
		}
		if !reflect.DeepEqual(c.Before, before) {
			t.Errorf("Before = %#v, want data overlaid with old %#v", c.Before, before)
		}
	})
}

// TestConformancePaimonState applies Paimon's schema-evolution files in
// order with primary key id and compares the table with the state Paimon
// asserts after each file.
func TestConformancePaimonState(t *testing.T) {
	d := newDecoder(t, nil)
	table := flinkrow.NewTable("id")
	for _, file := range []string{"maxwell-data-1.txt", "maxwell-data-2.txt", "maxwell-data-3.txt"} {
		name := "paimon-schemaevolution/" + file
		for _, c := range decodetest.DecodeLines(t, d, name, fixture(t, name)) {
			if c.Table != (changelog.Table{Namespace: "test", Name: "product"}) {
				t.Fatalf("%v: table %v, want test.product", c.Pos, c.Table)
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
}
