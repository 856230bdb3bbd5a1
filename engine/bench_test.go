package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
)

// BenchmarkEndToEnd runs a whole pipeline per server: txsink-json files of
// an orders workload (inserts, updates, deletes, -D/+I pairs, an
// append-only table) read, decoded, reduced and committed. It reports
// source events/s and rows written/s.
//
//	go test -run '^$' -bench EndToEnd -benchtime 3x ./engine
func BenchmarkEndToEnd(b *testing.B) {
	res := workload.Generate(workload.Spec{Orders: 20000, Partitions: 2, Seed: 5, Events: true})
	for _, d := range testdb.Dialects {
		b.Run(d, func(b *testing.B) {
			db := testdb.Open(b, d)
			db.Exec(b, workload.Schema(d)...)
			paths := writeWorkload(b, res)
			var events, rows int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				for _, t := range workload.Tables {
					db.Exec(b, "DELETE FROM "+t)
				}
				cfg := workloadPipeline(db, paths)
				cfg.Name = fmt.Sprintf("bench-%d", i)
				cfg.Sink.FlushMaxRows = 5000
				e, err := engine.New(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				st := e.Stats()
				for _, n := range st.Events {
					events += n
				}
				rows += st.Upserted + st.Deleted + st.Inserted
				e.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
