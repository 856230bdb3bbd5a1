package sqlsink_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/schema"
)

// fkBenchUnit is one unit inserting n orders, 3n items and 3n notes (a
// third of them replying to the note before, written in the same unit)
// with keys from base, its batches children first, so that commit's order
// without foreign keys would write a child before its parent.
func fkBenchUnit(orders, items, notes *schema.Table, base, n int64, seq int64) *commit.Unit {
	og := commit.Group{Columns: []string{"id", "customer", "items"}}
	ig := commit.Group{Columns: []string{"id", "order_id", "sku", "notes"}}
	ng := commit.Group{Columns: []string{"id", "item_id", "reply_to", "body"}}
	for o := base; o < base+n; o++ {
		og.Rows = append(og.Rows, []any{o, fmt.Sprintf("c%d", o%50), int64(3)})
		for k := int64(0); k < 3; k++ {
			id := 3*o + k
			ig.Rows = append(ig.Rows, []any{id, o, "sku", int64(1)})
			var reply any
			if k > 0 && k%2 == 0 {
				reply = id - 1
			}
			ng.Rows = append(ng.Rows, []any{id, id, reply, "a note"})
		}
	}
	return &commit.Unit{Pipeline: "fkbench",
		Batches: []*commit.Batch{
			{Table: notes, Upserts: []commit.Group{ng}},
			{Table: items, Upserts: []commit.Group{ig}},
			{Table: orders, Upserts: []commit.Group{og}},
		},
		Progress: []changelog.Position{{Partition: "p0", Offset: seq, Seq: seq}}}
}

// BenchmarkForeignKeyOrder applies units of 1,000 orders, 3,000 items and
// 3,000 notes to orders ← order_items ← item_notes (notes replying to
// notes) with real foreign keys, on every server: "ordered" with the keys
// read from the catalog, so Apply orders the tables and levels the
// replies; "commit-order" with them hidden from Apply and the batches
// given parents first, the order that needs no planning. The ratio of the
// two is the cost of ordering; "plan" is the ordering alone, in memory.
func BenchmarkForeignKeyOrder(b *testing.B) {
	for _, d := range testdb.Dialects {
		b.Run(d, func(b *testing.B) {
			db := testdb.Open(b, d)
			db.Exec(b, fkBenchSchema...)
			tdb := openTarget(b, db)
			ctx := context.Background()
			if err := tdb.Setup(ctx); err != nil {
				b.Fatal(err)
			}
			describe := func(name string) *schema.Table {
				tbl, err := tdb.Describe(ctx, schema.Name{Name: name})
				if err != nil {
					b.Fatal(err)
				}
				return tbl
			}
			orders, items, notes := describe("orders"), describe("order_items"), describe("item_notes")
			bare := func(t *schema.Table) *schema.Table { c := *t; c.ForeignKeys = nil; return &c }
			const n = 1000
			base, seq := int64(0), int64(0)
			for _, variant := range []string{"ordered", "commit-order"} {
				b.Run(variant, func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						seq++
						u := fkBenchUnit(orders, items, notes, base, n, seq)
						if variant == "commit-order" {
							u = fkBenchUnit(bare(orders), bare(items), bare(notes), base, n, seq)
							u.Batches[0], u.Batches[2] = u.Batches[2], u.Batches[0]
						}
						base += n
						if err := tdb.Apply(ctx, u); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(7*n), "ns/row")
				})
			}
		})
	}
}

var fkBenchSchema = []string{
	"CREATE TABLE orders (id BIGINT PRIMARY KEY, customer VARCHAR(40) NOT NULL, items INT NOT NULL)",
	"CREATE TABLE order_items (id BIGINT PRIMARY KEY, order_id BIGINT NOT NULL, sku VARCHAR(40) NOT NULL, notes INT NOT NULL," +
		" CONSTRAINT items_order FOREIGN KEY (order_id) REFERENCES orders (id) ON DELETE CASCADE)",
	"CREATE TABLE item_notes (id BIGINT PRIMARY KEY, item_id BIGINT NOT NULL, reply_to BIGINT NULL, body VARCHAR(80) NOT NULL," +
		" CONSTRAINT notes_item FOREIGN KEY (item_id) REFERENCES order_items (id)," +
		" CONSTRAINT notes_reply FOREIGN KEY (reply_to) REFERENCES item_notes (id))",
}
