package debezium

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/internal/decodetest"
	"github.com/txsink/txsink/internal/cputime"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestTestdataTypes decodes a realistic MySQL update carrying most logical
// types, with and without the Connect schema.
func TestTestdataTypes(t *testing.T) {
	d := newDecoder(t, nil)
	names := []string{"id", "price", "balance", "created", "updated", "birth", "opens", "seen", "doc", "blob", "flag", "ratio", "note"}
	c := decodeOne(t, d, readTestdata(t, "mysql-types-connect.json"))
	wantAfter := changelog.Row{Names: names, Values: []changelog.Value{
		changelog.Number("1001"), changelog.Number("0.00"), changelog.Number("10000.0000"),
		"1969-12-31 00:00:00.001", "2024-02-29T12:00:00.5Z", "1960-01-01", "09:00:00",
		"2024-02-29 12:00:00.123456", `{"tags":["a"]}`, []byte{0, 1, 0xfe},
		changelog.Number("1"), changelog.Number("0.25"), `café "quoted"`,
	}}
	wantBefore := changelog.Row{Names: names, Values: append([]changelog.Value(nil), wantAfter.Values...)}
	wantBefore.Values[1], wantBefore.Values[2], wantBefore.Values[12] = changelog.Number("19.99"), changelog.Number("-1234567890.1234"), nil
	const txn = "5d0bc1e2-d6a4-11ee-a2d6-0242ac120002:42"
	if c.Kind != changelog.UpdateAfter || c.Table.String() != "inventory.accounts" || c.TxnID != txn {
		t.Errorf("kind, table, txn = %v, %v, %q", c.Kind, c.Table, c.TxnID)
	}
	if !reflect.DeepEqual(c.After, wantAfter) {
		t.Errorf("After =\n%#v\nwant\n%#v", c.After, wantAfter)
	}
	if !reflect.DeepEqual(c.Before, wantBefore) {
		t.Errorf("Before =\n%#v\nwant\n%#v", c.Before, wantBefore)
	}

	// Without the schema the same payload keeps its raw JSON values.
	c = decodeOne(t, d, readTestdata(t, "mysql-types-bare.json"))
	raw := []changelog.Value{
		changelog.Number("1001"), "AA==", "BfXhAA==", changelog.Number("-86399999"), "2024-02-29T12:00:00.5Z",
		changelog.Number("-3653"), changelog.Number("32400000000"), changelog.Number("1709208000123456"),
		`{"tags":["a"]}`, "AAH+", changelog.Number("1"), changelog.Number("0.25"), `café "quoted"`,
	}
	if !reflect.DeepEqual(c.After, changelog.Row{Names: names, Values: raw}) || c.TxnID != txn {
		t.Errorf("schemaless After =\n%#v", c.After)
	}
}

// fuzzSeeds returns records to start fuzzing from: the testdata records,
// every line of the conformance fixtures when present, and a few edge cases.
func fuzzSeeds(f *testing.F) [][]byte {
	seeds := [][]byte{
		readTestdata(f, "mysql-types-connect.json"),
		readTestdata(f, "mysql-types-bare.json"),
		readTestdata(f, "schema-change-mysql.json"),
		readTestdata(f, "schema-change-mysql-connect.json"),
		readTestdata(f, "schema-change-database.json"),
		readTestdata(f, "message-postgres.json"),
		readTestdata(f, "message-postgres-connect.json"),
		bare("c", "null", `{"id":1,"doc":{"a":[1,{"b":null}]},"s":"\u00e9\ud83d\ude00"}`),
		bare("u", "null", `{"id":1}`),
		bare("d", `{"id":1}`, "null"),
		bare("t", "null", "null"),
		[]byte(`{"status":"BEGIN","id":"571:53195829"}`),
		[]byte(`{"schema":null,"payload":null}`),
		connect([]field{{name: "v", typ: "struct", logical: logicalVarDecimal}}, "c", "null", `{"v":{"scale":2,"value":"/w=="}}`),
		connect([]field{{name: "v", typ: "int64", logical: logicalNanoTime}}, "c", "null", `{"v":-1}`),
		[]byte("null"),
		[]byte(`{"id":1004}`),
	}
	return append(seeds, decodetest.FixtureSeeds(conformanceDir, true)...)
}

// FuzzDecode: Decode never panics; it returns valid changes or a
// *format.Error.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
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
		checkChanges(t, cs, pos)
	})
}

// checkChanges checks the invariants every decoded change holds.
func checkChanges(t *testing.T, cs []changelog.Change, pos changelog.Position) {
	t.Helper()
	if len(cs) > 1 {
		t.Fatalf("%d changes from one Debezium record", len(cs))
	}
	for _, c := range cs {
		switch c.Kind {
		case changelog.Insert, changelog.UpdateBefore, changelog.UpdateAfter, changelog.Delete:
		case changelog.EndTxn:
			// A transaction END: no table, no row, an id and a count.
			if !c.TxnEnd || c.TxnID == "" || c.TxnEvents < 0 || c.Pos != pos || !c.Before.IsZero() || !c.After.IsZero() {
				t.Fatalf("bad EndTxn change %+v", c)
			}
			continue
		case changelog.SchemaChange, changelog.Message:
			decodetest.SkippedChange(t, c, pos)
			continue
		default:
			t.Fatalf("invalid kind %v", c.Kind)
		}
		if c.Table.Name == "" || c.Pos != pos {
			t.Fatalf("table %#v, pos %v", c.Table, c.Pos)
		}
		if c.Image().IsZero() {
			t.Fatalf("%v change without its image", c.Kind)
		}
		decodetest.Rows(t, c, true)
	}
}

// benchmarkDecode decodes recs in turn; an op is one record. It reports
// the process's CPU time per record beside wall time: on a shared machine
// wall time measures the neighbours too.
func benchmarkDecode(b *testing.B, recs ...[]byte) {
	benchmarkDecoder(b, newDecoder(b, nil), recs...)
}

// benchmarkNarrowed is benchmarkDecode with the decoder told that the
// updates of table t are read for its key key only, as the engine tells
// it (Decoder.NarrowBefore).
func benchmarkNarrowed(b *testing.B, t changelog.Table, key []string, recs ...[]byte) {
	d := newDecoder(b, nil)
	d.NarrowBefore(t, key)
	benchmarkDecoder(b, d, recs...)
}

// benchmarkDecoder is benchmarkDecode with decoder d.
func benchmarkDecoder(b *testing.B, d *Decoder, recs ...[]byte) {
	pos := changelog.Position{Partition: "bench", Seq: 1}
	var size int
	for _, rec := range recs {
		if _, err := d.Decode(rec, pos); err != nil {
			b.Fatal(err)
		}
		size += len(rec)
	}
	b.ReportAllocs()
	b.SetBytes(int64(size / len(recs)))
	cpu0, cpuOK := cputime.Process()
	i := 0
	for b.Loop() {
		if _, err := d.Decode(recs[i%len(recs)], pos); err != nil {
			b.Fatal(err)
		}
		i++
	}
	if cpu1, ok := cputime.Process(); ok && cpuOK {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkDecode measures realistic records: a MySQL update of a
// 13-column row with and without the Connect schema, and a small Flink
// fixture row.
func BenchmarkDecode(b *testing.B) {
	b.Run("bare-types-update", func(b *testing.B) { benchmarkDecode(b, readTestdata(b, "mysql-types-bare.json")) })
	b.Run("connect-types-update", func(b *testing.B) { benchmarkDecode(b, readTestdata(b, "mysql-types-connect.json")) })
	// The same updates with their before images read for the key only.
	accounts := changelog.Table{Namespace: "inventory", Name: "accounts"}
	b.Run("bare-types-update-narrowed", func(b *testing.B) {
		benchmarkNarrowed(b, accounts, []string{"id"}, readTestdata(b, "mysql-types-bare.json"))
	})
	b.Run("connect-types-update-narrowed", func(b *testing.B) {
		benchmarkNarrowed(b, accounts, []string{"id"}, readTestdata(b, "mysql-types-connect.json"))
	})
	b.Run("bare-small-insert", func(b *testing.B) {
		benchmarkDecode(b, []byte(`{"before":null,"after":{"id":101,"name":"scooter","description":"Small 2-wheel scooter","weight":3.140000104904175},"source":{"version":"1.1.1.Final","connector":"mysql","name":"dbserver1","ts_ms":0,"snapshot":"true","db":"inventory","table":"products","server_id":0,"gtid":null,"file":"mysql-bin.000003","pos":154,"row":0,"thread":null,"query":null},"op":"c","ts_ms":1589355606100,"transaction":null}`))
	})
	// The records of txsink bench's workloads, one source transaction of
	// an order and its items: BEGIN, the inserts, END; decoded in turn
	// by one decoder, as a partition's records are.
	b.Run("bench-insert-txn", func(b *testing.B) {
		benchmarkDecode(b, benchBegin, benchOrderInsert, benchItemInsert1, benchItemInsert2, benchEnd)
	})
	// Each kind of the bench's records alone, so that allocs/op (rounded
	// down to a whole number per op) is exact for each.
	b.Run("bench-begin", func(b *testing.B) { benchmarkDecode(b, benchBegin) })
	b.Run("bench-orders-insert", func(b *testing.B) { benchmarkDecode(b, benchOrderInsert) })
	b.Run("bench-items-insert", func(b *testing.B) { benchmarkDecode(b, benchItemInsert1) })
	b.Run("bench-end", func(b *testing.B) { benchmarkDecode(b, benchEnd) })
	b.Run("bench-update", func(b *testing.B) { benchmarkDecode(b, benchUpdate) })
	b.Run("bench-update-narrowed", func(b *testing.B) {
		benchmarkNarrowed(b, changelog.Table{Namespace: "shop", Name: "orders"}, []string{"id"}, benchUpdate)
	})
	// Told a key the image lacks: read for it, then again whole.
	b.Run("bench-update-narrowed-miss", func(b *testing.B) {
		benchmarkNarrowed(b, changelog.Table{Namespace: "shop", Name: "orders"}, []string{"order_no"}, benchUpdate)
	})
}

// benchUpdate is an update of the bench's orders, with its before image.
var benchUpdate = []byte(`{"before":{"id":4831,"customer":"c512","status":"NEW","amount":945.55,"created_at":"2026-11-01 09:20:30.000","note":null},"after":{"id":4831,"customer":"c512","status":"PAID","amount":945.55,"created_at":"2026-11-01 09:20:30.000","note":null},"source":{"version":"2.7.3.Final","connector":"mysql","name":"bench","ts_ms":1767225600000,"snapshot":"false","db":"shop","sequence":null,"table":"orders","server_id":1,"gtid":null,"file":"binlog.000001","pos":4711,"row":0,"thread":7,"query":null},"op":"u","ts_ms":1767225600000,"transaction":{"id":"t1000","total_order":1,"data_collection_order":1}}`)

// The records txsink bench writes (see internal/benchrun/debezium.go): a transaction's
// BEGIN and END and the inserts of an order and its items.
var (
	benchBegin       = []byte(`{"status":"BEGIN","id":"t1","event_count":null,"data_collections":null,"ts_ms":1767225600000}`)
	benchOrderInsert = []byte(`{"before":null,"after":{"id":1,"customer":"Linus","status":"NEW","amount":969.60,"created_at":"2026-11-01 08:00:00.000","note":null},"source":{"version":"2.7.3.Final","connector":"mysql","name":"bench","ts_ms":1767225600000,"snapshot":"false","db":"shop","sequence":null,"table":"orders","server_id":1,"gtid":null,"file":"binlog.000001","pos":4711,"row":0,"thread":7,"query":null},"op":"c","ts_ms":1767225600000,"transaction":{"id":"t1","total_order":1,"data_collection_order":1}}`)
	benchItemInsert1 = []byte(`{"before":null,"after":{"order_id":1,"line_no":1,"sku":"SKU-15113","qty":3,"price":7.14},"source":{"version":"2.7.3.Final","connector":"mysql","name":"bench","ts_ms":1767225600000,"snapshot":"false","db":"shop","sequence":null,"table":"order_items","server_id":1,"gtid":null,"file":"binlog.000001","pos":4711,"row":0,"thread":7,"query":null},"op":"c","ts_ms":1767225600000,"transaction":{"id":"t1","total_order":2,"data_collection_order":2}}`)
	benchItemInsert2 = []byte(`{"before":null,"after":{"order_id":1,"line_no":2,"sku":"SKU-64442","qty":3,"price":183.76},"source":{"version":"2.7.3.Final","connector":"mysql","name":"bench","ts_ms":1767225600000,"snapshot":"false","db":"shop","sequence":null,"table":"order_items","server_id":1,"gtid":null,"file":"binlog.000001","pos":4711,"row":0,"thread":7,"query":null},"op":"c","ts_ms":1767225600000,"transaction":{"id":"t1","total_order":3,"data_collection_order":3}}`)
	benchEnd         = []byte(`{"status":"END","id":"t1","event_count":3,"data_collections":null,"ts_ms":1767225600000}`)
)
