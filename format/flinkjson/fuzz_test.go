package flinkjson

import (
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/internal/decodetest"
)

// fuzzSeeds returns records to start fuzzing from: a few edge cases and
// every record of the conformance fixtures when present.
func fuzzSeeds() [][]byte {
	seeds := [][]byte{
		[]byte(`{"data":{"id":1,"doc":{"a":[1,{"b":null}]},"s":"\u00e9\ud83d\ude00"},"op":"+I"}`),
		[]byte(`{"op":"-U","data":{"id":1}}`),
		[]byte(`{"data":{"id":1},"op":"-D"}`),
		[]byte(`{"data":null,"op":"+U"}`),
		[]byte("null"),
		[]byte(`{"id":1004}`),
	}
	return append(seeds, decodetest.FixtureSeeds(conformanceDir, false)...)
}

// FuzzDecode: Decode never panics and never modifies its input; it returns
// valid changes or a complete *format.Error.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	d := newDecoder(f, format.Options{OptionTable: "fuzz.t"})
	pos := changelog.Position{Partition: "fuzz", Offset: 7, Seq: 3}
	var mem changelog.Arena
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, ok := decodetest.FuzzDecode(t, d, &mem, Name, data, pos)
		if !ok {
			return
		}
		checkChanges(t, cs, pos)
	})
}

// checkChanges checks the invariants every decoded change holds.
func checkChanges(t *testing.T, cs []changelog.Change, pos changelog.Position) {
	t.Helper()
	if len(cs) > 1 {
		t.Fatalf("%d changes from one changelog-json record", len(cs))
	}
	for _, c := range cs {
		switch c.Kind {
		case changelog.Insert, changelog.UpdateBefore, changelog.UpdateAfter, changelog.Delete:
		default:
			t.Fatalf("invalid kind %v", c.Kind)
		}
		if c.Table.Name == "" || c.Pos != pos {
			t.Fatalf("table %#v, pos %v", c.Table, c.Pos)
		}
		if c.Image().IsZero() || (c.Table != changelog.Table{Namespace: "fuzz", Name: "t"}) {
			t.Fatalf("%v change without its image or of the wrong table: %+v", c.Kind, c)
		}
		decodetest.Rows(t, c, false)
	}
}

func benchmarkDecode(b *testing.B, r []byte) {
	decodetest.BenchmarkDecode(b, newDecoder(b, format.Options{OptionTable: "inventory.products"}), r)
}

// BenchmarkDecode measures realistic records: the Flink fixture's product
// row, and a wider row.
func BenchmarkDecode(b *testing.B) {
	b.Run("small-insert", func(b *testing.B) {
		benchmarkDecode(b, []byte(`{"data":{"id":101,"name":"scooter","description":"Small 2-wheel scooter","weight":3.140000104904175},"op":"+I"}`))
	})
	b.Run("wide-update-after", func(b *testing.B) {
		benchmarkDecode(b, []byte(`{"data":{"id":1001,"customer_id":42,"status":"shipped","amount":129.99,"currency":"EUR","created_at":"2024-02-29 12:00:00","updated_at":"2024-03-01 08:15:02","note":null,"address":"12 Rue de la Paix","city":"Paris","zip":"75002","country":"FR"},"op":"+U"}`))
	})
}
