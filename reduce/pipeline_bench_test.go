package reduce

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format/debezium"
	"github.com/txsink/txsink/internal/cputime"
	"github.com/txsink/txsink/schema"
)

// benchSchema is the bench workload's orders and order_items tables as a
// MySQL catalog describes them (txsink bench, internal/workload).
func benchSchema(tb testing.TB) map[changelog.Table]*Table {
	tb.Helper()
	orders := &schema.Table{Namespace: "test", Name: "orders", PrimaryKey: []string{"id"}, Columns: []schema.Column{
		{Name: "id", Class: schema.Int, Bits: 64, SQLType: "bigint"},
		{Name: "customer", Class: schema.String, Length: 64, Compare: schema.Compare{Fold: schema.FoldLower}, SQLType: "varchar(64)"},
		{Name: "status", Class: schema.String, Length: 16, Compare: schema.Compare{Fold: schema.FoldLower}, SQLType: "varchar(16)"},
		{Name: "amount", Class: schema.Decimal, Precision: 12, Scale: 2, SQLType: "decimal(12,2)"},
		{Name: "created_at", Class: schema.DateTime, FracDigits: 3, SQLType: "datetime(3)"},
		{Name: "note", Class: schema.String, Length: 200, Nullable: true, Compare: schema.Compare{Fold: schema.FoldLower}, SQLType: "varchar(200)"},
	}}
	items := &schema.Table{Namespace: "test", Name: "order_items", PrimaryKey: []string{"order_id", "line_no"}, Columns: []schema.Column{
		{Name: "order_id", Class: schema.Int, Bits: 64, SQLType: "bigint"},
		{Name: "line_no", Class: schema.Int, Bits: 32, SQLType: "int"},
		{Name: "sku", Class: schema.String, Length: 32, Compare: schema.Compare{Fold: schema.FoldLower}, SQLType: "varchar(32)"},
		{Name: "qty", Class: schema.Int, Bits: 32, SQLType: "int"},
		{Name: "price", Class: schema.Decimal, Precision: 10, Scale: 2, SQLType: "decimal(10,2)"},
	}}
	out := map[changelog.Table]*Table{}
	for _, st := range []*schema.Table{orders, items} {
		t, err := NewTable(st, nil, false)
		if err != nil {
			tb.Fatal(err)
		}
		out[changelog.Table{Namespace: "shop", Name: st.Name}] = t
	}
	return out
}

// benchRecord appends one Debezium record as txsink bench writes it.
func benchRecord(b []byte, op, table, before, after, txn string, order int) []byte {
	b = append(b, `{"before":`...)
	b = append(b, before...)
	b = append(b, `,"after":`...)
	b = append(b, after...)
	b = append(b, `,"source":{"version":"2.7.3.Final","connector":"mysql","name":"bench","ts_ms":1767225600000,"snapshot":"false","db":"shop","sequence":null,"table":"`...)
	b = append(b, table...)
	b = append(b, `","server_id":1,"gtid":null,"file":"binlog.000001","pos":4711,"row":0,"thread":7,"query":null},"op":"`...)
	b = append(b, op...)
	b = append(b, `","ts_ms":1767225600000,"transaction":{"id":"`...)
	b = append(b, txn...)
	b = append(b, `","total_order":`...)
	b = strconv.AppendInt(b, int64(order), 10)
	b = append(b, `,"data_collection_order":`...)
	b = strconv.AppendInt(b, int64(order), 10)
	return append(b, "}}"...)
}

func benchOrder(id int, status string) string {
	return fmt.Sprintf(`{"id":%d,"customer":"c%d","status":"%s","amount":%d.%02d,"created_at":"2026-11-01 09:%02d:%02d.000","note":null}`,
		id, id%1000, status, id%997, id%100, id/60%60, id%60)
}

// benchWorkload returns the records of txsink bench's workloads: for
// insert-only, per source transaction BEGIN, an order, three items and
// END; for update-heavy, per source transaction BEGIN, one update (with
// its before image) or delete of one of 8000 orders, and END; update-hot
// is update-heavy on 500 orders, whose every change but each key's last
// is superseded within its unit.
func benchWorkload(name string, n int) [][]byte {
	var recs [][]byte
	txnRec := func(status, id string, count int) []byte {
		if status == "BEGIN" {
			return []byte(`{"status":"BEGIN","id":"` + id + `","event_count":null,"data_collections":null,"ts_ms":1767225600000}`)
		}
		return []byte(`{"status":"END","id":"` + id + `","event_count":` + strconv.Itoa(count) + `,"data_collections":null,"ts_ms":1767225600000}`)
	}
	for i := 1; len(recs) < n; i++ {
		txn := "t" + strconv.Itoa(i)
		recs = append(recs, txnRec("BEGIN", txn, 0))
		switch name {
		case "insert-only":
			recs = append(recs, benchRecord(nil, "c", "orders", "null", benchOrder(i, "NEW"), txn, 1))
			for l := 1; l <= 3; l++ {
				item := fmt.Sprintf(`{"order_id":%d,"line_no":%d,"sku":"SKU-%05d","qty":%d,"price":%d.%02d}`, i, l, (i*7+l)%99999, l, i%300, l*7%100)
				recs = append(recs, benchRecord(nil, "c", "order_items", "null", item, txn, l+1))
			}
			recs = append(recs, txnRec("END", txn, 4))
		case "update-heavy", "update-hot":
			id := i % 8000
			if name == "update-hot" {
				id = i % 500
			}
			if i%20 == 0 {
				recs = append(recs, benchRecord(nil, "d", "orders", benchOrder(id, "PAID"), "null", txn, 1))
			} else {
				recs = append(recs, benchRecord(nil, "u", "orders", benchOrder(id, "NEW"), benchOrder(id, "PAID"), txn, 1))
			}
			recs = append(recs, txnRec("END", txn, 1))
		}
	}
	return recs[:n]
}

// BenchmarkPipeline measures txsink's own cost per record on the records
// of txsink bench: decoding (debezium-json) and reducing, conversion
// included, with a Take every 5000 rows as buffer-flush.max-rows does. It
// leaves out only reading the file and applying the units to a database.
// The arena variants decode into a changelog.Arena reset every 128
// records, as the engine's plain loop recycles one per decoded batch; the
// heap variants into the heap. (The heap variants were named for their
// workload alone, which -bench 'BenchmarkPipeline/^insert-only/arena$'
// also ran, a name with fewer levels than the pattern matching it: the
// counts per record taken so before 2026-12-03's second round are of
// both.)
// The -8p variants read 8 partitions (each key in one of them: orders by
// id, items by order id), the -keys variants with the buffer confined to one
// partition per key and the memory of keys' partitions of a pipeline of
// several partitions (sink.key-partitions.remember's default): what
// that check costs per record. The -orders variants decode with each
// change's place in its source's log read (format.OrderReader), as over
// NATS, and the buffer noting it: what that costs (issue #31).
func BenchmarkPipeline(b *testing.B) {
	for _, bc := range []struct {
		name  string
		arena bool
		parts bool
		keys  bool
	}{{"insert-only/heap", false, false, false}, {"update-heavy/heap", false, false, false}, {"insert-only/arena", true, false, false}, {"update-heavy/arena", true, false, false},
		{"insert-only/arena-8p", true, true, false}, {"insert-only/arena-8p-keys", true, true, true},
		{"update-heavy/arena-8p", true, true, false}, {"update-heavy/arena-8p-keys", true, true, true},
		{"update-hot/arena", true, false, false},
		{"insert-only/arena-orders", true, false, false}, {"update-heavy/arena-orders", true, false, false}, {"update-hot/arena-orders", true, false, false}} {
		w, _, _ := strings.Cut(bc.name, "/")
		b.Run(bc.name, func(b *testing.B) {
			recs := benchWorkload(w, 30000)
			tables := benchSchema(b)
			dec, err := debezium.New(nil)
			if err != nil {
				b.Fatal(err)
			}
			for src, t := range tables {
				// As the engine does once it knows a table's key.
				dec.NarrowBefore(src, t.Key)
			}
			if strings.HasSuffix(bc.name, "-orders") {
				dec.ReadOrders()
			}
			var size int64
			for _, r := range recs {
				size += int64(len(r))
			}
			buf := NewBuffer("bench")
			if bc.keys {
				buf.ConfinePartitions(NewKeyPartitions(1_000_000))
			}
			// part holds each record's partition.
			part := make([]string, len(recs))
			last := "p0"
			for r, rec := range recs {
				cs, err := dec.Decode(rec, changelog.Position{})
				if err != nil {
					b.Fatal(err)
				}
				if bc.parts && len(cs) > 0 && cs[0].Kind != changelog.EndTxn {
					img := cs[0].Image()
					id, ok := img.Get("order_id")
					if !ok {
						id, _ = img.Get("id")
					}
					n, _ := id.(changelog.Number).Int64()
					last = fmt.Sprint("p", n%8)
				}
				part[r] = last
			}
			// As the engine finds each change's table (Engine.tableFor),
			// remembered under the names of its first change.
			var byTable Tables
			var mem *changelog.Arena
			if bc.arena {
				mem = new(changelog.Arena)
			}
			b.ReportAllocs()
			b.SetBytes(size / int64(len(recs)))
			cpu0, cpuOK := cputime.Process()
			i := 0
			for b.Loop() {
				rec, p := recs[i%len(recs)], part[i%len(recs)]
				i++
				pos := changelog.Position{Partition: p, Offset: int64(i), Seq: int64(i)}
				if i%128 == 0 {
					mem.Reset()
				}
				cs, err := dec.DecodeIn(mem, rec, pos)
				if err != nil {
					b.Fatal(err)
				}
				if len(cs) == 0 {
					buf.Skip(pos, t0)
				}
				for j := range cs {
					// As the engine does: a boundary only moves progress.
					if cs[j].Kind == changelog.EndTxn {
						buf.Skip(pos, t0)
						continue
					}
					t, ok := byTable.Get(cs[j].Table)
					if !ok {
						t = tables[cs[j].Table]
						byTable.Put(cs[j].Table, t)
					}
					if err := buf.Add(t, &cs[j], t0); err != nil {
						b.Fatal(err)
					}
				}
				if buf.Rows() >= 5000 {
					buf.Take()
				}
			}
			if cpu1, ok := cputime.Process(); ok && cpuOK {
				b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
