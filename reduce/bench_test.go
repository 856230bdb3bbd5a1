package reduce

import (
	"fmt"
	"hash/maphash"
	"strconv"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/schema"
)

// BenchmarkAdd measures adding changes to the buffer, conversion included:
// unique keys (every change a new row) and hot keys (ten changes per key).
func BenchmarkAdd(b *testing.B) {
	for _, bc := range []struct {
		name string
		keys int
	}{{"unique-keys", 1 << 30}, {"hot-keys", 1000}} {
		b.Run(bc.name, func(b *testing.B) {
			tbl := ordersTable(b)
			changes := make([]changelog.Change, 10000)
			for i := range changes {
				changes[i] = changelog.Change{Kind: changelog.UpdateAfter, Size: 100,
					After: row("id", changelog.Number(fmt.Sprint(i%bc.keys)), "amount", changelog.Number("123.45"), "status", "PAID"),
					Pos:   changelog.Position{Partition: "p", Offset: int64(i), Seq: int64(i)}}
			}
			benchAdd(b, tbl, changes)
		})
	}
}

// benchAdd adds changes to a buffer in turn, b.N of them, taking a unit
// every 5000 rows, and reports changes/s.
func benchAdd(b *testing.B, tbl *Table, changes []changelog.Change) {
	b.Helper()
	b.ReportAllocs()
	buf := NewBuffer("p")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := buf.Add(tbl, &changes[i%len(changes)], t0); err != nil {
			b.Fatal(err)
		}
		if buf.Rows() >= 5000 {
			buf.Take()
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "changes/s")
}

// BenchmarkTake measures turning a full buffer into a commit unit.
func BenchmarkTake(b *testing.B) {
	tbl := ordersTable(b)
	changes := make([]changelog.Change, 5000)
	for i := range changes {
		changes[i] = changelog.Change{Kind: changelog.Insert, Size: 100,
			After: row("id", changelog.Number(fmt.Sprint(i)), "amount", changelog.Number("1.00"), "status", "NEW"),
			Pos:   changelog.Position{Partition: "p", Offset: int64(i), Seq: int64(i)}}
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		buf := NewBuffer("p")
		for j := range changes {
			if err := buf.Add(tbl, &changes[j], t0); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if u := buf.Take(); len(u.Batches) != 1 {
			b.Fatal("no batch")
		}
	}
}

// BenchmarkRowKey is the cost of identifying a change's row without
// converting it (transaction mode counts max-rows with it), for a
// one-column and a two-column key.
func BenchmarkRowKey(b *testing.B) {
	seed := maphash.MakeSeed()
	orders := ordersTable(b)
	st := &schema.Table{Name: "items", PrimaryKey: []string{"order_id", "line_no"}, Columns: []schema.Column{
		{Name: "order_id", Class: schema.Int, Bits: 64}, {Name: "line_no", Class: schema.Int, Bits: 32}, {Name: "sku", Class: schema.String},
	}}
	items, err := NewTable(st, nil, false)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		t    *Table
		img  changelog.Row
	}{
		{"one column", orders, row("id", changelog.Number("1001"), "amount", changelog.Number("12.50"), "status", "NEW")},
		{"two columns", items, row("order_id", changelog.Number("1001"), "line_no", changelog.Number("3"), "sku", "SKU-15113")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, ok := bc.t.RowKey(bc.img, seed); !ok {
					b.Fatal("no key")
				}
			}
		})
	}
}

// BenchmarkConfined measures what confining keys to their partitions
// costs Add: not confined, confined within the unit, and with the memory
// of keys' partitions across units (the default 1,000,000 key writes), for
// unique keys (every change a key write) and hot keys (ten changes per
// key, a key write per unit). The changes come from 8 partitions in runs
// of 16, each partition with keys of its own; a unit is taken every 5000
// rows.
func BenchmarkConfined(b *testing.B) {
	for _, keys := range []int{1 << 30, 1000} {
		for _, mode := range []string{"off", "unit", "memory"} {
			name := fmt.Sprintf("unique-keys/%s", mode)
			if keys < 1<<30 {
				name = fmt.Sprintf("hot-keys/%s", mode)
			}
			b.Run(name, func(b *testing.B) {
				tbl := ordersTable(b)
				changes := make([]changelog.Change, 1<<16)
				for i := range changes {
					id := i
					if keys < 1<<30 {
						id = i % keys
					}
					part := id / 16 % 8
					changes[i] = changelog.Change{Kind: changelog.UpdateAfter, Size: 100,
						After: row("id", changelog.Number(fmt.Sprint(id)), "amount", changelog.Number("123.45"), "status", "PAID"),
						Pos:   changelog.Position{Partition: fmt.Sprint("/var/lib/cdc/p", part, ".json"), Offset: int64(i), Seq: int64(i)}}
				}
				buf := NewBuffer("p")
				switch mode {
				case "unit":
					buf.ConfinePartitions(nil)
				case "memory":
					buf.ConfinePartitions(NewKeyPartitions(1_000_000))
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					c := &changes[i%len(changes)]
					if keys == 1<<30 {
						// Unique keys past the table's: shift them.
						c.After.Values[0] = changelog.Number(strconv.Itoa(i))
						c.Pos.Partition = changes[i/16%8].Pos.Partition
					}
					if err := buf.Add(tbl, c, t0); err != nil {
						b.Fatal(err)
					}
					if buf.Rows() >= 5000 {
						buf.Take()
					}
				}
			})
		}
	}
}
