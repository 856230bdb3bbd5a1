package sqlsink_test

import (
	"strings"
	"testing"

	"github.com/txsink/txsink/internal/golden"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink/sqlsink"
	"github.com/txsink/txsink/sink/sqlsink/mysql"
	"github.com/txsink/txsink/sink/sqlsink/postgres"
	"github.com/txsink/txsink/sink/sqlsink/sqlite"
)

// TestStatements golden-tests the SQL each dialect writes, so a change to
// a statement shows up as a reviewed diff of testdata/*.sql.
func TestStatements(t *testing.T) {
	single := &schema.Table{Name: "orders", PrimaryKey: []string{"id"}}
	composite := &schema.Table{Namespace: "shop", Name: "order`items\"x", PrimaryKey: []string{"order_id", "line_no"}}
	dialects := []struct {
		name string
		d    sqlsink.Dialect
	}{
		{"mariadb", &mysql.Dialect{MariaDB: true}},
		{"mysql8", &mysql.Dialect{RowAlias: true}},
		{"postgres", postgres.Dialect{}},
		{"sqlite", sqlite.Dialect{}},
	}
	for _, dc := range dialects {
		t.Run(dc.name, func(t *testing.T) {
			var out strings.Builder
			emit := func(title string, f func(b *strings.Builder)) {
				var b strings.Builder
				f(&b)
				out.WriteString("-- " + title + "\n" + b.String() + ";\n\n")
			}
			d := dc.d
			emit("upsert, one key column, 2 rows", func(b *strings.Builder) { d.Upsert(b, single, []string{"id", "amount", "status"}, 2) })
			emit("upsert, composite key, quoted names", func(b *strings.Builder) { d.Upsert(b, composite, []string{"order_id", "line_no", "qty"}, 2) })
			emit("upsert, key columns only", func(b *strings.Builder) { d.Upsert(b, composite, []string{"order_id", "line_no"}, 1) })
			emit("guarded upsert, version column v last whatever its place", func(b *strings.Builder) {
				d.(sqlsink.Guarder).GuardedUpsert(b, single, []string{"id", "v", "amount"}, 2, "v")
			})
			emit("insert, 3 rows", func(b *strings.Builder) { d.Insert(b, single, []string{"id", "note"}, 3) })
			emit("delete, one key column, 3 keys", func(b *strings.Builder) { d.Delete(b, single, 3) })
			emit("delete, composite key, 2 keys", func(b *strings.Builder) { d.Delete(b, composite, 2) })
			emit("progress claim", func(b *strings.Builder) { d.ProgressClaim(b) })
			emit("progress advance, fenced by epoch", func(b *strings.Builder) { d.ProgressAdvance(b) })
			golden.Check(t, dc.name+".sql", out.String())
		})
	}
}

func TestUpdateIsOff(t *testing.T) {
	if *golden.Update {
		t.Error("-update is on: golden files are being rewritten, not checked")
	}
}
