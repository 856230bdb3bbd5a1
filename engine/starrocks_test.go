package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
	"github.com/txsink/txsink/sink"
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

// TestStarRocksDeadLetterPlain is TestDeadLetterPlain against the
// StarRocks fake: each bad record — one cut short, one with a value
// longer in bytes than its VARCHAR, one of an unknown table, one of a
// source transaction whose id is 140,000 bytes long — goes to
// txsink_dead_letters in the commit that moves the progress past it, the
// good ones are applied, and a second run changes nothing.
func TestStarRocksDeadLetterPlain(t *testing.T) {
	long := strings.Repeat("é", 70000)
	lines := []string{
		`{"op":"+I","table":"s.items","row":{"id":1,"name":"ok-1"}}`,
		`{"op":"+I","table":"s.items","row":{"id":2,"name":"ok-2"`,     // cut short
		`{"op":"+I","table":"s.items","row":{"id":3,"name":"ÄÖÜßÄÖ"}}`, // 6 characters, 12 bytes
		`{"op":"+I","table":"s.nowhere","row":{"id":4}}`,
		`{"op":"+I","table":"s.items","row":{"id":5,"name":"far too long for the column"},"txn":"` + long + `"}`,
		`{"op":"+U","table":"s.items","row":{"id":1,"name":"ok-1b"}}`,
	}
	_, db := starrocksFake(t, starrocks.DeadLetterDDL,
		`CREATE TABLE items (id INT NOT NULL, name VARCHAR(10) NOT NULL) PRIMARY KEY (id) DISTRIBUTED BY HASH(id)`)
	cfg := pipeline(db, config.Table{Source: "s.items"})
	cfg.Name = "starrocks-dead-letters"
	cfg.Source.Set("paths", []string{writeLines(t, t.TempDir(), "in.jsonl", lines)})
	cfg.BadInput = config.BadInputDeadLetter
	for run := 1; run <= 2; run++ {
		e := newEngine(t, cfg)
		if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
			t.Fatalf("run %d with the dead-letter policy: %v", run, err)
		}
		if got := query(t, db, "SELECT id, name FROM items ORDER BY id"); got != "1|ok-1b" {
			t.Errorf("run %d: items = %q, want 1|ok-1b", run, got)
		}
		rows, err := e.Target().(sink.DeadLetterer).DeadLetters(context.Background(), cfg.Name)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []string
		for _, r := range rows {
			seqs = append(seqs, fmt.Sprint(r.Seq))
		}
		if got := strings.Join(seqs, ","); got != "2,3,4,5" {
			t.Fatalf("run %d: dead letters at lines %s, want 2,3,4,5: %+v", run, got, rows)
		}
		if string(rows[0].Raw) != lines[1] || !strings.Contains(rows[0].Reason, "in.jsonl:2") || rows[0].ID != 1 {
			t.Errorf("run %d: the cut-short record's dead letter: %+v", run, rows[0])
		}
		if !strings.Contains(rows[1].Reason, "bytes") || !strings.Contains(rows[1].Reason, "(3)") {
			t.Errorf("run %d: the 12-byte name's reason %q, want one naming key (3) and bytes", run, rows[1].Reason)
		}
		if rows[3].TxnID != long || string(rows[3].Raw) != lines[4] {
			t.Errorf("run %d: the long transaction id came back %d bytes, raw %d bytes; want %d and %d", run, len(rows[3].TxnID), len(rows[3].Raw), len(long), len(lines[4]))
		}
		if got := query(t, db, "SELECT seq FROM txsink_progress WHERE pipeline = '"+cfg.Name+"'"); got != "6" {
			t.Errorf("run %d: progress seq = %s, want 6 (past every record)", run, got)
		}
		want := int64(4)
		if run == 2 {
			want = 0 // nothing is read again
		}
		if st := e.Stats(); st.DeadLetters != want {
			t.Errorf("run %d: Stats.DeadLetters = %d, want %d", run, st.DeadLetters, want)
		}
	}
}

// starrocksRefusalCases are rows the StarRocks fake filters in strict
// mode (its ErrorURL names them) that txsink's own checks let through:
// the server's refusal, bisected to the row, is quarantined.
var starrocksRefusalCases = []refusalCase{
	{name: "not-null-without-default",
		table: `CREATE TABLE items (id INT NOT NULL, name VARCHAR(20), note VARCHAR(20) NOT NULL) PRIMARY KEY (id) DISTRIBUTED BY HASH(id)`,
		bad:   `{"id":4,"name":"no note"}`, reason: "note is not null"},
}

// TestStarRocksDeadLetterServerRefusals is TestDeadLetterServerRefusals
// against the StarRocks fake: a row the server filters stops the pipeline
// under bad-input: fail, naming its key; under dead-letter its record
// (plain) or source transaction (transaction mode) is quarantined with the
// server's reason, exactly once, a flush per change and all in one.
func TestStarRocksDeadLetterServerRefusals(t *testing.T) {
	for _, tc := range starrocksRefusalCases {
		t.Run(tc.name, func(t *testing.T) {
			_, db := starrocksFake(t, starrocks.DeadLetterDDL, tc.table)
			lines := refusalLines(tc.op, tc.bad)
			path := writeLines(t, t.TempDir(), "in.jsonl", lines)
			for _, txn := range []bool{false, true} {
				for _, maxRows := range []int{1, 10000} {
					name := fmt.Sprintf("refusal-txn-%v-rows-%d", txn, maxRows)
					t.Run(name, func(t *testing.T) { serverRefusal(t, db, tc, path, lines, name, txn, maxRows) })
				}
			}
		})
	}
}
