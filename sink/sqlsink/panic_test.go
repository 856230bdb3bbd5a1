package sqlsink_test

import (
	"context"
	"database/sql/driver"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/internal/testdb"
)

// panicValue panics when the driver asks for its value: a stand-in for a
// defect of txsink's own that panics while a unit is applied.
type panicValue struct{}

func (panicValue) Value() (driver.Value, error) { panic("a defect while applying") }

// TestApplyPanicEndsItsTransaction: a panic while a unit is applied
// reaches the caller (the process crashes with it, and says where),
// instead of hanging on the unit's connection, which its open transaction
// held; and the target is usable afterwards, the unit rolled back.
func TestApplyPanicEndsItsTransaction(t *testing.T) {
	for _, d := range testdb.Dialects {
		t.Run(d, func(t *testing.T) {
			db := testdb.Open(t, d)
			db.Exec(t, "CREATE TABLE kv (id INT PRIMARY KEY, v VARCHAR(20))")
			tdb, describe := setupTarget(t, db)
			kv := describe("kv")
			ctx := context.Background()
			pos := changelog.Position{Partition: "p0", Offset: 1, Seq: 1}
			unit := func(v any) *commit.Unit {
				return &commit.Unit{Pipeline: "panic", Progress: []changelog.Position{pos},
					Batches: []*commit.Batch{{Table: kv, Upserts: []commit.Group{group([]string{"id", "v"}, pos, []any{int64(1), v})}}}}
			}
			func() {
				defer func() {
					if r := recover(); r == nil || !strings.Contains(r.(string), "a defect while applying") {
						t.Errorf("recovered %v, want the panic", r)
					}
				}()
				_ = tdb.Apply(ctx, unit(panicValue{}))
			}()
			if err := tdb.Apply(ctx, unit("after")); err != nil {
				t.Fatalf("the next unit after a panic: %v", err)
			}
			var v string
			if err := db.SQL.QueryRow("SELECT v FROM kv WHERE id = 1").Scan(&v); err != nil || v != "after" {
				t.Errorf("row 1 = %q, %v; want the next unit's", v, err)
			}
		})
	}
}
