package reduce

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/txsink/txsink/changelog"
)

// TestBytesIsTheRowsMemory checks that Bytes, which max-bytes bounds, is
// about what the buffered rows take on the heap: the live heap a buffer
// of many rows holds, measured after a collection, against what Bytes
// says. Heap figures are deterministic enough for this: every change is
// garbage once added, and only the buffer is kept.
func TestBytesIsTheRowsMemory(t *testing.T) {
	tables := benchSchema(t)
	orders := tables[changelog.Table{Namespace: "shop", Name: "orders"}]
	items := tables[changelog.Table{Namespace: "shop", Name: "order_items"}]
	appendOnly, err := NewTable(orders.Schema, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	order := func(id int) changelog.Row {
		return row("id", changelog.Number(fmt.Sprint(1_000_000+id)), "customer", fmt.Sprintf("customer-%d", id%977),
			"status", "NEW", "amount", changelog.Number(fmt.Sprintf("%d.%02d", id%5000, id%100)),
			"created_at", "2026-11-01 08:00:00.123", "note", nil)
	}
	item := func(id int) changelog.Row {
		return row("order_id", changelog.Number(fmt.Sprint(1_000_000+id/3)), "line_no", changelog.Number(fmt.Sprint(id%3+1)),
			"sku", fmt.Sprintf("SKU-%05d", id%99991), "qty", changelog.Number("3"), "price", changelog.Number("183.76"))
	}
	const n = 50_000
	for _, tc := range []struct {
		name   string
		table  *Table
		change func(i int) changelog.Change
	}{
		{"upserts", orders, func(i int) changelog.Change { return changelog.Change{Kind: changelog.Insert, After: order(i)} }},
		{"upserts, two key columns", items, func(i int) changelog.Change { return changelog.Change{Kind: changelog.Insert, After: item(i)} }},
		{"updates", orders, func(i int) changelog.Change {
			return changelog.Change{Kind: changelog.UpdateAfter, Before: order(i), After: order(i)}
		}},
		{"deletes", orders, func(i int) changelog.Change { return changelog.Change{Kind: changelog.Delete, Before: order(i)} }},
		{"append-only inserts", appendOnly, func(i int) changelog.Change { return changelog.Change{Kind: changelog.Insert, After: order(i)} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBuffer("p")
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for i := range n {
				c := tc.change(i)
				c.Pos = changelog.Position{Partition: "p", Seq: int64(i + 1), Offset: int64(i)}
				c.Size = 10_000 // a record's size must not matter
				if err := b.Add(tc.table, &c, t0); err != nil {
					t.Fatal(err)
				}
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			heap := float64(after.HeapAlloc) - float64(before.HeapAlloc)
			runtime.KeepAlive(b)
			// The slices and the index grow by doubling, and the
			// allocator rounds up: the heap may hold somewhat more than
			// the rows themselves.
			ratio := heap / float64(b.Bytes())
			t.Logf("%d rows: Bytes %d (%d per row), live heap %.0f (%.0f per row), heap/Bytes %.2f",
				b.Rows(), b.Bytes(), b.Bytes()/int64(b.Rows()), heap, heap/float64(b.Rows()), ratio)
			if ratio < 0.8 || ratio > 1.3 {
				t.Errorf("the buffered rows take %.2f times what Bytes says (want 0.8 to 1.3)", ratio)
			}
		})
	}
}
