package reduce

import (
	"fmt"
	"testing"

	"github.com/txsink/txsink/changelog"
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
		})
	}
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
