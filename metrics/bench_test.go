package metrics_test

import (
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/metrics"
)

// BenchmarkOnChange counts changes as the engine's loop does: runs of one
// table and partition, alternating between two tables.
func BenchmarkOnChange(b *testing.B) {
	m := metrics.New(&config.Config{Name: "bench", Tables: []config.Table{{Source: "shop.*"}}})
	orders := changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Namespace: "shop", Name: "orders"}, Pos: changelog.Position{Partition: "p0.json"}}
	items := orders
	items.Table.Name = "order_items"
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%4 == 0 {
			m.OnChange(&orders)
		} else {
			m.OnChange(&items)
		}
		i++
	}
}
