package sqlsink

import (
	"testing"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/schema"
)

// BenchmarkForeignKeyPlan measures the planning Apply adds for foreign
// keys, in memory, on the unit of BenchmarkForeignKeyOrder (1,000 orders,
// 3,000 items, 3,000 notes, a third replying to the note before):
// cascades, the order of steps and the levels of the notes.
func BenchmarkForeignKeyPlan(b *testing.B) {
	orders := &schema.Table{Name: "orders", PrimaryKey: []string{"id"}}
	items := &schema.Table{Name: "order_items", PrimaryKey: []string{"id"}, ForeignKeys: []schema.ForeignKey{
		{Name: "items_order", Columns: []string{"order_id"}, Parent: schema.Name{Name: "orders"}, ParentColumns: []string{"id"}, OnDelete: "CASCADE"}}}
	notes := &schema.Table{Name: "item_notes", PrimaryKey: []string{"id"}, ForeignKeys: []schema.ForeignKey{
		{Name: "notes_item", Columns: []string{"item_id"}, Parent: schema.Name{Name: "order_items"}, ParentColumns: []string{"id"}, OnDelete: "NO ACTION"},
		{Name: "notes_reply", Columns: []string{"reply_to"}, Parent: schema.Name{Name: "item_notes"}, ParentColumns: []string{"id"}, OnDelete: "NO ACTION"}}}
	og := commit.Group{Columns: []string{"id", "customer", "items"}}
	ig := commit.Group{Columns: []string{"id", "order_id", "sku", "notes"}}
	ng := commit.Group{Columns: []string{"id", "item_id", "reply_to", "body"}}
	for o := int64(0); o < 1000; o++ {
		og.Rows = append(og.Rows, []any{o, "c", int64(3)})
		for k := int64(0); k < 3; k++ {
			id := 3*o + k
			ig.Rows = append(ig.Rows, []any{id, o, "sku", int64(1)})
			var reply any
			if k == 2 {
				reply = id - 1
			}
			ng.Rows = append(ng.Rows, []any{id, id, reply, "a note"})
		}
	}
	batches := []*commit.Batch{{Table: notes, Upserts: []commit.Group{ng}}, {Table: items, Upserts: []commit.Group{ig}}, {Table: orders, Upserts: []commit.Group{og}}}
	tables := []*schema.Table{notes, items, orders}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		bs := cascaded(batches)
		if _, _, err := Order(tables, []bool{false, false, false}, []bool{true, true, true}, false); err != nil {
			b.Fatal(err)
		}
		self := selfKeys(notes, false)
		if _, err := writeLevels(notes, bs[0].Upserts, self); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/7000, "ns/row")
}
