package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/source"
	"github.com/txsink/txsink/source/file"
)

// nopDecoder decodes every record into nothing, so that a benchmark of
// the feed counts the reading, framing and handing over of records, not
// their decoding.
type nopDecoder struct{}

func (nopDecoder) Decode([]byte, changelog.Position) ([]changelog.Change, error) { return nil, nil }

// feedBenchFile writes n records shaped like txsink bench's Debezium
// streams to a file in dir and returns its path: for insert-only a BEGIN,
// four inserts of 440-580 bytes and an END per transaction; for
// update-heavy a BEGIN, an update of about 800 bytes (before and after
// images) and an END.
func feedBenchFile(b *testing.B, dir, name, workload string, n int) string {
	var sb strings.Builder
	source := func(i int) string {
		return `"source":{"version":"2.7.3.Final","connector":"mysql","name":"dbserver1","ts_ms":1767225600000,"snapshot":"false",` +
			`"db":"inventory","sequence":null,"table":"orders","server_id":223344,"gtid":null,"file":"mysql-bin.000003",` +
			`"pos":` + strconv.Itoa(i*311) + `,"row":0,"thread":7}`
	}
	order := func(i int, status string) string {
		return fmt.Sprintf(`{"id":%d,"customer_id":%d,"status":"%s","amount":"%d.25","note":"%s","created_at":"2026-01-01T00:00:00Z"}`,
			i%8000, i%977, status, i%10000, strings.Repeat("n", i%64))
	}
	changes := 4
	if workload == "update-heavy" {
		changes = 1
	}
	for i, recs := 1, 0; recs < n; i++ {
		txn := "t" + strconv.Itoa(i)
		sb.WriteString(`{"status":"BEGIN","id":"` + txn + `","event_count":null,"data_collections":null,"ts_ms":1767225600000}` + "\n")
		recs++
		for l := 0; l < changes && recs < n; l++ {
			before, after, op := "null", order(i, "NEW"), "c"
			if workload == "update-heavy" {
				before, after, op = order(i, "NEW"), order(i, "PAID"), "u"
			}
			fmt.Fprintf(&sb, `{"before":%s,"after":%s,%s,"op":"%s","ts_ms":1767225600123,`+
				`"transaction":{"id":"%s","total_order":%d,"data_collection_order":%d}}`+"\n",
				before, after, source(i), op, txn, l+1, l+1)
			recs++
		}
		if recs < n {
			fmt.Fprintf(&sb, `{"status":"END","id":"%s","event_count":%d,"data_collections":null,"ts_ms":1767225600000}`+"\n", txn, changes)
			recs++
		}
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkFeed reads bench-shaped files through the file source and
// readPartition into decode jobs (of a decoder that does nothing) and a
// loop that takes the batches: the engine's cost of reading, framing and
// handing over each record, which the pipeline benchmarks of package
// reduce leave out. One op reads 40,000 records, split over the
// partitions; under callgrind:
//
//	scripts/cpu-per-event.sh ./engine 'BenchmarkFeed/^insert-only/partitions=1$' 2 4
//
// and divide by 40,000.
func BenchmarkFeed(b *testing.B) {
	const records = 40_000
	for _, bench := range []struct {
		workload string
		parts    int
	}{{"insert-only", 1}, {"insert-only", 8}, {"update-heavy", 1}, {"update-heavy", 8}} {
		workload, parts := bench.workload, bench.parts
		b.Run(fmt.Sprintf("%s/partitions=%d", workload, parts), func(b *testing.B) {
			dir := b.TempDir()
			var cfg file.Config
			var size int64
			for p := range parts {
				path := feedBenchFile(b, dir, fmt.Sprintf("p%d.jsonl", p), workload, records/parts)
				cfg.Partitions = append(cfg.Partitions, []string{path})
				fi, err := os.Stat(path)
				if err != nil {
					b.Fatal(err)
				}
				size += fi.Size()
			}
			b.SetBytes(size)
			b.ReportAllocs()
			ctx := context.Background()
			pool := newDecodePool(nopDecoder{}, decodeWorkers(), batchArenas)
			defer pool.close()
			for b.Loop() {
				src := file.New(cfg, source.Env{})
				readers, err := src.Open(ctx, source.Start{
					Stored: func(string) (source.Stored, bool) { return source.Stored{}, false },
				})
				if err != nil {
					b.Fatal(err)
				}
				out := make(chan []decoded, len(readers))
				done := make(chan error, len(readers))
				for _, r := range readers {
					go func() { done <- readPartition(ctx, r, pool, out, false) }()
				}
				n := 0
				for running := len(readers); running > 0; {
					select {
					case ds := <-out:
						for _, d := range ds {
							if d.err != nil {
								b.Fatal(d.err)
							}
						}
						n += len(ds)
						releaseBatch(ds, true)
					case err := <-done:
						if err != nil {
							b.Fatal(err)
						}
						running--
					}
				}
				for len(out) > 0 {
					n += len(<-out)
				}
				src.Close()
				if n != records {
					b.Fatalf("took %d records, want %d", n, records)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*records), "ns/record")
		})
	}
}
