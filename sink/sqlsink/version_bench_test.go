package sqlsink_test

import (
	"context"
	"testing"

	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink/sqlsink"
)

// BenchmarkShapeVersion measures the catalog query every unit pays per
// table to know its table was not altered (target.Versioner), against a
// one-row SELECT for scale: the round trip every statement pays anyway.
func BenchmarkShapeVersion(b *testing.B) {
	for _, d := range testdb.Dialects {
		b.Run(d, func(b *testing.B) {
			db := testdb.Open(b, d)
			db.Exec(b, `CREATE TABLE orders (id INT NOT NULL PRIMARY KEY, amount DECIMAL(12,2) NOT NULL, status VARCHAR(16), note VARCHAR(200), at TIMESTAMP NULL)`)
			tdb := openTarget(b, db)
			v := tdb.Dialect().(sqlsink.Versioner)
			ctx := context.Background()
			b.Run("version", func(b *testing.B) {
				for b.Loop() {
					if _, err := v.ShapeVersion(ctx, tdb.DB(), schema.Name{Name: "orders"}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("select-1", func(b *testing.B) {
				for b.Loop() {
					var n int
					if err := tdb.DB().QueryRowContext(ctx, "SELECT 1").Scan(&n); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
