package nats_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/txsink/txsink/internal/pipelinetest"
	"github.com/txsink/txsink/internal/testdb"
	_ "github.com/txsink/txsink/source/file" // the file source, to compare with
)

// BenchmarkSource measures, in one run, the messages/s of the same
// Debezium transactions (metadata on, three tables) applied into SQLite in
// transaction mode, read from a NATS stream and from a file, so that the
// two compare as a ratio on a loaded machine. Both commit every 100ms. Run it once: go test -run -
// -bench Source -benchtime 1x ./source/nats/
func BenchmarkSource(b *testing.B) {
	const txns = 20000
	for b.Loop() {
		s := newStream(b)
		m := newModel(s.prefix, 17)
		var all []msg
		for i := range txns {
			all = append(all, m.next(i)...)
		}
		for _, ms := range all {
			if _, err := s.js.PublishAsync(ms.subject, ms.data); err != nil {
				b.Fatal(err)
			}
		}
		select {
		case <-s.js.PublishAsyncComplete():
		case <-time.After(5 * time.Minute):
			b.Fatal("the stream did not acknowledge the messages within 5 minutes")
		}
		var file bytes.Buffer
		for _, ms := range all {
			file.Write(ms.data)
			file.WriteByte('\n')
		}
		path := filepath.Join(b.TempDir(), "debezium.jsonl")
		if err := os.WriteFile(path, file.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
		want := m.dump()

		// The file: the run ends at the end of the input.
		dst := testdb.SQLite(b)
		dst.Exec(b, targetTables["sqlite"]...)
		cfg := pipeline("bench_file", s, dst)
		cfg.Source.Type = "file"
		cfg.Source.Raw = nil
		cfg.Source.Set("paths", []string{path})
		// The stream's run ends when the target holds the last position,
		// at a commit tick: the interval is short, so as not to count a
		// long wait for the last tick.
		cfg.Sink.FlushInterval = 100 * time.Millisecond
		t0 := time.Now()
		if err := pipelinetest.Start(b, cfg).Wait(); err != nil {
			b.Fatal(err)
		}
		fileTook := time.Since(t0)
		if got := dumpTarget(b, dst); got != want {
			b.Fatal("the file's target differs from the source")
		}

		// The stream: the run goes on; it is done once the target holds
		// the last message's position.
		dst = testdb.SQLite(b)
		dst.Exec(b, targetTables["sqlite"]...)
		t0 = time.Now()
		ncfg := pipeline("bench_nats", s, dst)
		ncfg.Sink.FlushInterval = cfg.Sink.FlushInterval
		r := pipelinetest.Start(b, ncfg)
		waitProgress(b, dst, s, int64(len(all))+1)
		natsTook := time.Since(t0)
		r.Stop(b)
		if got := dumpTarget(b, dst); got != want {
			b.Fatal("the stream's target differs from the source")
		}
		b.ReportMetric(float64(len(all))/natsTook.Seconds(), "nats-msgs/s")
		b.ReportMetric(float64(len(all))/fileTook.Seconds(), "file-msgs/s")
		b.ReportMetric(fileTook.Seconds()/natsTook.Seconds(), "nats/file")
	}
}
