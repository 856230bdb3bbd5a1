package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/format/native"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
)

// BenchmarkFreshness measures how long a finished source transaction takes
// to become visible in the target in transaction mode: a writer appends one
// transaction every 10ms to a followed file; the time from its append to
// the commit that includes it is its latency. It reports p50 and p99 in
// milliseconds next to the commit interval (200ms; mini-switch automatic,
// 100ms). The budget under steady load is interval + mini-switch interval,
// plus the file source's 50ms poll; with min-switch-bytes above what a
// trickle of small transactions fills, up to twice the interval (seed 001).
//
//	go test -run '^$' -bench Freshness -benchtime 1x ./engine
func BenchmarkFreshness(b *testing.B) {
	res := workload.Generate(workload.Spec{Orders: 150, Partitions: 1, Seed: 8})
	// Group the changes into their transactions, as lines to append.
	var txns [][]byte
	var line []byte
	for _, c := range res.Partitions[0] {
		var err error
		if line, err = native.Append(line, &c); err != nil {
			b.Fatal(err)
		}
		if c.TxnEnd {
			txns = append(txns, line)
			line = nil
		}
	}
	const interval = 200 * time.Millisecond
	for _, d := range testdb.Dialects {
		for _, minSwitch := range []int64{0, 1 << 20} {
			b.Run(fmt.Sprintf("%s/min-switch-bytes=%d", d, minSwitch), func(b *testing.B) {
				benchFreshness(b, d, txns, interval, minSwitch)
			})
		}
	}
}

func benchFreshness(b *testing.B, d string, txns [][]byte, interval time.Duration, minSwitch int64) {
	db := testdb.Open(b, d)
	db.Exec(b, workload.Schema(d)...)
	var lat []time.Duration
	for i := 0; i < b.N; i++ {
		for _, t := range workload.Tables {
			db.Exec(b, "DELETE FROM "+t)
		}
		lat = append(lat, freshnessRun(b, db, txns, interval, minSwitch)...)
	}
	slices.Sort(lat)
	ms := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(ms(0.5), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
	b.ReportMetric(float64(interval/time.Millisecond), "interval-ms")
}

// freshnessRun appends txns to a followed file one every 10ms and returns
// each one's append-to-commit latency.
func freshnessRun(b *testing.B, db *testdb.DB, txns [][]byte, interval time.Duration, minSwitch int64) []time.Duration {
	b.Helper()
	path := filepath.Join(b.TempDir(), "p0.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	cfg := txnPipeline(workloadPipeline(db, []string{path}))
	cfg.Name = "freshness"
	cfg.Source.Set("follow", true)
	cfg.Sink.FlushInterval = interval
	cfg.Sink.TxnMiniSwitchInterval = -1 // automatic
	cfg.Sink.TxnMinSwitchBytes = minSwitch

	var mu sync.Mutex
	ends := make([]int64, len(txns))        // file offset after each transaction
	written := make([]time.Time, len(txns)) // when it was appended
	visible := make([]time.Time, len(txns))
	next := 0 // first transaction not yet seen committed
	all := make(chan struct{})
	e, err := engine.New(context.Background(), cfg, engine.WithCommitHook(func(u *commit.Unit) {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		for _, p := range u.Progress {
			for next < len(txns) && !written[next].IsZero() && ends[next] <= p.Offset {
				visible[next] = now
				next++
			}
		}
		if next == len(txns) {
			close(all)
		}
	}))
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- e.Run(ctx, engine.RunOptions{}) }()

	var off int64
	tick := time.NewTicker(10 * time.Millisecond)
	for i, t := range txns {
		<-tick.C
		mu.Lock()
		off += int64(len(t))
		ends[i], written[i] = off, time.Now()
		mu.Unlock()
		if _, err := f.Write(t); err != nil {
			b.Fatal(err)
		}
	}
	tick.Stop()
	select {
	case <-all:
	case err := <-runErr:
		b.Fatalf("run ended early: %v", err)
	case <-time.After(time.Minute):
		b.Fatal("not every transaction became visible within a minute")
	}
	cancel()
	if err := <-runErr; err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, len(txns))
	for i := range txns {
		lat[i] = visible[i].Sub(written[i])
	}
	return lat
}
