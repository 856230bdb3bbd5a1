package mysql_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink/sqlsink"
	"github.com/txsink/txsink/sink/sqlsink/mysql"
)

// BenchmarkApplyPaths measures whole units (BEGIN to COMMIT, progress row
// included) of one group of N order rows, written by each path in turn:
//
//	stmt       multi-row statements, into a plain table
//	load       LOAD DATA ... REPLACE, into a plain table
//	uk-stmt    multi-row statements, into a table with a second unique key
//	uk-load    the loader on that table, where REPLACE is not exact: new
//	           rows go in by plain LOAD DATA, updates by the statements
//	           after a (backed-off) attempt
//	trg-stmt   multi-row statements, into that table with a trigger
//	trg-stage  the staging table, into that table (the trigger rules out
//	           the new-rows attempt)
//
// "new" writes fresh keys, "update" overwrites existing rows. The paths
// take turns within each iteration, so the noise of a shared server hits
// them alike, and each reports the median unit as rows/s: that is what the
// threshold (DefaultBulkMinRows) and the staging default were chosen on.
//
//	CI=true go test -run '^$' -bench ApplyPaths -benchtime 40x ./sink/sqlsink/mysql/
func BenchmarkApplyPaths(b *testing.B) {
	ctx := context.Background()
	for _, rows := range []int{64, 128, 256, 512, 1000, 5000} {
		for _, mode := range []string{"new", "update"} {
			b.Run(fmt.Sprintf("rows=%d/%s", rows, mode), func(b *testing.B) {
				db := testdb.MySQL(b)
				paths := []string{"stmt", "load", "uk-stmt", "uk-load", "trg-stmt", "trg-stage"}
				targets := make([]*sqlsink.DB, len(paths))
				units := make([]func(iter int) *commit.Unit, len(paths))
				for i, path := range paths {
					kind, how, _ := strings.Cut(path, "-")
					uk := kind != "stmt" && kind != "load"
					table := "t_" + strings.ReplaceAll(path, "-", "_")
					ddl := "CREATE TABLE " + table + ` (id BIGINT NOT NULL PRIMARY KEY, customer VARCHAR(64) NOT NULL,
						status VARCHAR(16) NOT NULL, amount DECIMAL(12,2) NOT NULL, created_at DATETIME(3) NOT NULL, note VARCHAR(200) NULL`
					if uk {
						ddl += ", ref BIGINT NULL, UNIQUE KEY (ref)"
					}
					db.Exec(b, ddl+")")
					if kind == "trg" {
						db.Exec(b, "CREATE TRIGGER "+table+"_ins BEFORE INSERT ON "+table+" FOR EACH ROW SET NEW.note = NEW.note")
					}
					tdb := openTarget(b, db.URL)
					d := tdb.Dialect().(*mysql.Dialect)
					d.BulkMinRows = 1
					d.BulkStaging = how == "stage"
					if path == "stmt" || how == "stmt" {
						tdb = sqlsink.New(tdb.DB(), statementsOnly{d})
					}
					if err := tdb.Setup(ctx); err != nil {
						b.Fatal(err)
					}
					tbl, err := tdb.Describe(ctx, schema.Name{Name: table})
					if err != nil {
						b.Fatal(err)
					}
					cols := []string{"id", "customer", "status", "amount", "created_at", "note"}
					if uk {
						cols = append(cols, "ref")
					}
					targets[i] = tdb
					units[i] = func(iter int) *commit.Unit {
						base := iter * rows
						if mode == "update" {
							base = 0
						}
						g := commit.Group{Columns: cols}
						for r := 0; r < rows; r++ {
							id := int64(base + r + 1)
							row := []any{id, "Margaret Hamilton", "SHIPPED", fmt.Sprintf("%d.%02d", 1000+iter, r%100),
								time.Date(2026, 11, 1, 8, 0, r%60, (r%1000)*1000000, time.UTC), nil}
							if uk {
								row = append(row, id)
							}
							g.Rows = append(g.Rows, row)
							g.Pos = append(g.Pos, changelog.Position{Partition: "p", Offset: int64(base + r + 1)})
						}
						return &commit.Unit{Pipeline: "bench-" + path, Batches: []*commit.Batch{{Table: tbl, Upserts: []commit.Group{g}}},
							Progress: []changelog.Position{{Partition: "p", Offset: int64(iter + 1)}}}
					}
					if mode == "update" {
						if err := tdb.Apply(ctx, units[i](0)); err != nil {
							b.Fatal(err)
						}
					}
				}
				took := make([][]time.Duration, len(paths))
				for iter := 1; iter <= b.N; iter++ {
					for i := range paths {
						u := units[i](iter)
						start := time.Now()
						if err := targets[i].Apply(ctx, u); err != nil {
							b.Fatal(err)
						}
						took[i] = append(took[i], time.Since(start))
					}
				}
				for i, path := range paths {
					slices.Sort(took[i])
					b.ReportMetric(float64(rows)/took[i][len(took[i])/2].Seconds(), path+"-rows/s")
				}
				want := int64(b.N)
				if mode == "update" {
					want++ // the seed
				}
				for i, path := range paths {
					key, checked := map[string]string{"load": "replace", "uk-load": "new", "trg-stage": "stage"}[path]
					if !checked || (mode == "update" && path == "uk-load") {
						continue // statements, or mostly declined by design
					}
					counts := mysql.LoadCounts(targets[i].Dialect().(*mysql.Dialect))
					if counts[key] != want {
						b.Fatalf("%s: the loader did not take every group: %v", path, counts)
					}
				}
			})
		}
	}
}
