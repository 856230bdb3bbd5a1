package sqlsink_test

import (
	"strings"
	"testing"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink/sqlsink"
	"github.com/txsink/txsink/sink/sqlsink/mysql"
	"github.com/txsink/txsink/sink/sqlsink/postgres"
	"github.com/txsink/txsink/sink/sqlsink/sqlite"
)

// BenchmarkUpsertSQL measures building one 1000-row, 6-column upsert
// statement per dialect.
func BenchmarkUpsertSQL(b *testing.B) {
	t := &schema.Table{Name: "orders", PrimaryKey: []string{"id"}}
	cols := []string{"id", "customer", "status", "amount", "created_at", "note"}
	for _, dc := range []struct {
		name string
		d    sqlsink.Dialect
	}{{"mariadb", &mysql.Dialect{MariaDB: true}}, {"postgres", postgres.Dialect{}}, {"sqlite", sqlite.Dialect{}}} {
		b.Run(dc.name, func(b *testing.B) {
			b.ReportAllocs()
			var sb strings.Builder
			for i := 0; i < b.N; i++ {
				sb.Reset()
				dc.d.Upsert(&sb, t, cols, 1000)
			}
			b.SetBytes(int64(sb.Len()))
		})
	}
}
