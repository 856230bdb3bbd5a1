package ogg

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
		rec("I", "", `{"id":1,"doc":{"a":[1,{"b":null}]},"s":"\u00e9\ud83d\ude00"}`),
		rec("U", `{"id":1}`, `{"id":2}`),
		rec("U", "null", `{"id":2}`),
		rec("D", `{"id":1}`, "null"),
		rec("T", "", ""),
		[]byte("null"),
		[]byte(`{"id":1004}`),
	}
	return append(seeds, decodetest.FixtureSeeds(conformanceDir, false)...)
}

// FuzzDecode: Decode never panics and never modifies its input; it returns
// valid changes or a complete *format.Error.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s, false)
	}
	decoders := map[bool]*Decoder{
		false: newDecoder(f, nil),
		true:  newDecoder(f, format.Options{OptionAllowMissingBefore: "true"}),
	}
	pos := changelog.Position{Partition: "fuzz", Offset: 7, Seq: 3}
	var mem changelog.Arena
	f.Fuzz(func(t *testing.T, data []byte, allowMissingBefore bool) {
		cs, ok := decodetest.FuzzDecode(t, decoders[allowMissingBefore], &mem, Name, data, pos)
		if !ok {
			return
		}
		checkChanges(t, cs, pos, allowMissingBefore)
	})
}

// checkChanges checks the invariants every decoded change holds.
func checkChanges(t *testing.T, cs []changelog.Change, pos changelog.Position, allowMissingBefore bool) {
	t.Helper()
	if len(cs) > 1 {
		t.Fatalf("%d changes from one GoldenGate record", len(cs))
	}
	for _, c := range cs {
		switch c.Kind {
		case changelog.Insert, changelog.UpdateAfter, changelog.Delete:
		default:
			t.Fatalf("invalid kind %v", c.Kind)
		}
		if c.Table.Name == "" || c.Pos != pos {
			t.Fatalf("table %#v, pos %v", c.Table, c.Pos)
		}
		if c.Image().IsZero() || (c.Kind == changelog.UpdateAfter && c.Before.IsZero() && !allowMissingBefore) {
			t.Fatalf("%v change without its images: %+v", c.Kind, c)
		}
		decodetest.Rows(t, c, false)
	}
}

func benchmarkDecode(b *testing.B, r []byte) {
	decodetest.BenchmarkDecode(b, newDecoder(b, nil), r)
}

// BenchmarkDecode measures realistic records: an insert and an update of
// the Flink fixture's product row, and an update of a wider row.
func BenchmarkDecode(b *testing.B) {
	b.Run("small-insert", func(b *testing.B) {
		benchmarkDecode(b, []byte(`{"table":"OGG.TBL_TEST","pos":"00000000000000000000143","primary_keys":["id"],"after":{"id":101,"name":"scooter","description":"Small 2-wheel scooter","weight":3.140000104904175},"op_type":"I", "current_ts":"2020-05-13T13:39:35.766000", "op_ts":"2020-05-13 15:40:06.000000"}`))
	})
	b.Run("small-update", func(b *testing.B) {
		benchmarkDecode(b, []byte(`{"table":"OGG.TBL_TEST","pos":"00000000000000000000152","primary_keys":["id"],"before":{"id":106,"name":"hammer","description":"16oz carpenter's hammer","weight":1},"after":{"id":106,"name":"hammer","description":"18oz carpenter hammer","weight":1},"op_type":"U","op_ts":"2020-05-13 17:26:27.936000"}`))
	})
	b.Run("wide-update", func(b *testing.B) {
		benchmarkDecode(b, []byte(`{"table":"SHOP.ORDERS","op_type":"U","op_ts":"2024-03-01 08:15:02.000000","current_ts":"2024-03-01T08:15:02.512000","pos":"00000000120000004711","primary_keys":["ID"],"before":{"ID":1001,"CUSTOMER_ID":42,"STATUS":"paid","AMOUNT":129.99,"CURRENCY":"EUR","CREATED_AT":"2024-02-29 12:00:00","UPDATED_AT":"2024-02-29 12:00:00","NOTE":null,"ADDRESS":"12 Rue de la Paix","CITY":"Paris","ZIP":"75002","COUNTRY":"FR"},"after":{"ID":1001,"CUSTOMER_ID":42,"STATUS":"shipped","AMOUNT":129.99,"CURRENCY":"EUR","CREATED_AT":"2024-02-29 12:00:00","UPDATED_AT":"2024-03-01 08:15:02","NOTE":null,"ADDRESS":"12 Rue de la Paix","CITY":"Paris","ZIP":"75002","COUNTRY":"FR"}}`))
	})
}
