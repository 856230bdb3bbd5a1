package engine_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
	"github.com/txsink/txsink/sink/starrocks"
	"github.com/txsink/txsink/sink/starrocks/starrocksfake"
)

// starrocksWorkload is workload.Schema in StarRocks' DDL.
var starrocksWorkload = workload.Schema("starrocks")

// starrocksFake starts a StarRocks fake with txsink's tables and ddl
// made, and returns it with a testdb.DB whose URL is the fake's target
// URL and whose SQL reads its committed rows over the MySQL protocol.
func starrocksFake(t *testing.T, ddl ...string) (*starrocksfake.Fake, *testdb.DB) {
	t.Helper()
	f := starrocksfake.NewWithTables(t, starrocksfake.Options{}, append([]string{starrocks.ProgressDDL, starrocks.ClaimsDDL}, ddl...)...)
	return f, &testdb.DB{Dialect: "mysql", URL: f.SinkURL(), SQL: f.SQL()}
}

// loads counts the Stream Load transaction loads the fake received.
func loads(f *starrocksfake.Fake) int {
	n := 0
	for _, r := range f.Requests() {
		if r.Role == "BE" && strings.HasPrefix(r.Path, "/api/transaction/load") {
			n++
		}
	}
	return n
}

// TestStarRocksEndToEnd runs a pipeline from files (4 partitions of a
// multi-table workload) into the StarRocks fake, as `txsink run` would,
// through lost commit answers, a publish timeout, a commit and a load
// answered 5xx and a leader change: the final state is exact, every
// append-only event is there once, and a second run applies nothing again.
func TestStarRocksEndToEnd(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 600, Partitions: 4, Seed: 3, Events: true})
	f, db := starrocksFake(t, starrocksWorkload...)
	paths := writeWorkload(t, res)
	cfg := workloadPipeline(db, paths)
	cfg.Name = "starrocks-e2e"
	cfg.Sink.FlushMaxRows = 100
	cfg.Sink.FlushCoalesce = false
	var commits atomic.Int64
	start := time.Now()
	e := newEngine(t, cfg, engine.WithCommitHook(func(*commit.Unit) { commits.Add(1) }))
	// The units' first requests meet the faults (the claim at New is past).
	f.Inject(starrocksfake.OpCommit, starrocksfake.DropAnswer, starrocksfake.HTTP503, starrocksfake.PublishTimeout, starrocksfake.DropAnswer, starrocksfake.LeaderChange)
	f.Inject(starrocksfake.OpLoad, starrocksfake.HTTP500)
	if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	st := e.Stats()
	checkFinal(t, db, res)
	// Progress and claims are loads too: each commit carries its
	// tables' loads and one of txsink_progress.
	t.Logf("%d changes in %d commits, %.1f loads per commit, %.0f changes/s through the fake (a loaded machine; the fake is MariaDB underneath, not StarRocks)",
		res.Changes(), commits.Load(), float64(loads(f))/float64(max(commits.Load(), 1)), float64(res.Changes())/elapsed.Seconds())
	if commits.Load() < 2 || st.Commits != commits.Load() {
		t.Errorf("%d commits (stats %d), want several", commits.Load(), st.Commits)
	}
	if st.Retries == 0 {
		t.Errorf("no unit was retried: the injected faults did not bite")
	}
	e.Close()

	again := newEngine(t, cfg, engine.WithCommitHook(func(*commit.Unit) { commits.Add(1) }))
	before := commits.Load()
	if err := again.Run(context.Background(), engine.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := commits.Load() - before; n != 0 {
		t.Errorf("the second run committed %d units, want none", n)
	}
	checkFinal(t, db, res)
}

// TestStarRocksTransactionModeInvariant is TestTransactionModeInvariant
// against the StarRocks fake: in transaction mode a reader polling the
// cross-table invariant over the MySQL protocol never sees a source
// transaction in part.
func TestStarRocksTransactionModeInvariant(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 800, Partitions: 4, Seed: 9, Events: true})
	f, db := starrocksFake(t, starrocksWorkload...)
	cfg := workloadPipeline(db, writeWorkload(t, res))
	cfg.Name = "starrocks-invariant"
	txnPipeline(cfg)
	cfg.Sink.TxnBufferSize = 64 << 10
	r := runPolled(t, cfg, db)
	t.Logf("%d source transactions in %d commits (%.1f loads per commit); reader polled %d times, saw %d invariant violations",
		r.stats.Txns, r.commits, float64(loads(f))/float64(max(r.commits, 1)), r.polls, r.violations)
	checkFinal(t, db, res)
	r.checkInvariant(t)
	if r.stats.Txns != int64(res.Txns) {
		t.Errorf("committed %d source transactions, want %d", r.stats.Txns, res.Txns)
	}
}

// TestStarRocksRefusesChangesIntoDuplicateKey: a stream that may carry
// updates and deletes into a Duplicate Key table (StarRocks deletes rows
// of Primary Key tables only) is refused at start, before anything is
// read; declared append-only, it starts.
func TestStarRocksRefusesChangesIntoDuplicateKey(t *testing.T) {
	_, db := starrocksFake(t, `CREATE TABLE events (id BIGINT NOT NULL, what VARCHAR(20)) DUPLICATE KEY (id) DISTRIBUTED BY HASH(id)`)
	cfg := pipeline(db, config.Table{Source: "shop.events"})
	cfg.Name = "starrocks-dup"
	cfg.Source.Set("paths", []string{writeLines(t, t.TempDir(), "e.jsonl", nil)})
	_, err := engine.New(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "events") || !strings.Contains(err.Error(), "append-only") {
		t.Fatalf("engine.New: %v, want a refusal naming the table and append-only", err)
	}
	cfg.Tables[0].AppendOnly = true
	newEngine(t, cfg)
}
