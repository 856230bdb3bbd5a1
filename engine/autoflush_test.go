package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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

// commitReasons is a Hook that keeps each commit's reason.
type commitReasons chan string

func (c commitReasons) OnCommit(info engine.CommitInfo) {
	if info.Err == nil {
		c <- info.Reason
	}
}

// TestStarRocksAutonomousFlush runs transaction mode into the StarRocks
// fake (a fake, not StarRocks) on a fake clock: each frozen chunk of
// whole source transactions is loaded into the transaction kept open for
// the next commit as it freezes, while a reader over the MySQL protocol
// sees none of it; at the commit — the flush interval, or, with an
// interval longer than the transaction's timeout allows, the recycle at
// 80% of the timeout — every part is visible at once, in one transaction
// whose loads are the parts' and the progress.
func TestStarRocksAutonomousFlush(t *testing.T) {
	for _, tc := range []struct {
		name     string
		interval time.Duration
		timeout  string // the target URL's txn-timeout
		at       time.Duration
		reason   string
	}{
		{"at the interval", 10 * time.Second, "600s", 10 * time.Second, "interval"},
		{"recycled at 80% of the timeout", time.Hour, "100s", 80 * time.Second, "recycle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loaded := make(chan string, 64)
			f := starrocksfake.NewWithTables(t, starrocksfake.Options{Loaded: func(label, table string) { loaded <- table }},
				starrocks.ProgressDDL, starrocks.ClaimsDDL,
				"CREATE TABLE t (id INT NOT NULL, v VARCHAR(10) NOT NULL) PRIMARY KEY (id) DISTRIBUTED BY HASH(id)")
			db := &testdb.DB{Dialect: "mysql", URL: f.SinkURL() + "&txn-timeout=" + tc.timeout, SQL: f.SQL()}
			cfg := pipeline(db, config.Table{Source: "s.t"})
			cfg.Name = "autoflush"
			cfg.Source.Set("follow", true)
			cfg.Sink.TxnEnabled = true
			cfg.Sink.FlushInterval = tc.interval
			cfg.Sink.TxnMiniSwitchInterval = time.Second
			cfg.Sink.TxnMinSwitchBytes = 0
			reasons := make(commitReasons, 4)
			r := startClockRun(t, cfg, []string{
				`{"op":"+I","table":"s.t","row":{"id":1,"v":"a"},"txn":"t1","txn_end":true}`,
				`{"op":"+I","table":"s.t","row":{"id":2,"v":"b"},"txn":"t2"}`,
				`{"op":"+I","table":"s.t","row":{"id":3,"v":"c"},"txn":"t2","txn_end":true}`,
				`{"op":"-D","table":"s.t","row":{"id":1,"v":"a"},"txn":"t3","txn_end":true}`,
			}, engine.WithHooks(reasons))
			// awaitLoad waits for the next load into t (the claims' and the
			// progress' go by).
			awaitLoad := func(what string) {
				t.Helper()
				for {
					select {
					case table := <-loaded:
						if table == "t" {
							return
						}
					case err := <-r.runErr:
						t.Fatalf("%s: Run ended: %v", what, err)
					}
				}
			}
			r.awaitRead()
			// t1's end is the partition's first: its chunk freezes at once
			// and is loaded; t2 and t3 wait for the mini-switch interval.
			awaitLoad("t1's chunk")
			if got := query(t, db, "SELECT COUNT(*) FROM t"); got != "0" {
				t.Fatalf("a reader sees %s rows of the open transaction, want 0", got)
			}
			r.awaitDeadline(clockStart.Add(time.Second))
			r.clock.Advance(time.Second)
			awaitLoad("the chunk of t2 and t3")
			if got := query(t, db, "SELECT COUNT(*) FROM t"); got != "0" {
				t.Fatalf("a reader sees %s rows of the open transaction, want 0", got)
			}
			r.noCommit("before the commit is due")
			r.awaitDeadline(clockStart.Add(tc.at))
			r.clock.Set(clockStart.Add(tc.at - time.Nanosecond))
			r.awaitDeadline(clockStart.Add(tc.at))
			r.noCommit("a nanosecond before the commit is due")
			r.clock.Set(clockStart.Add(tc.at))
			u := r.nextCommit()
			if len(u.Parts) != 2 || u.Changes != 4 {
				t.Errorf("the unit has %d parts and %d changes, want the 2 chunks' parts and 4 changes", len(u.Parts), u.Changes)
			}
			if reason := <-reasons; reason != tc.reason {
				t.Errorf("the commit's reason is %q, want %q", reason, tc.reason)
			}
			if got := query(t, db, "SELECT id FROM t ORDER BY id"); got != "2\n3" {
				t.Errorf("rows after the commit = %q, want 2 and 3 (1 inserted by one part, deleted by the next)", got)
			}
			// One label: two parts, the progress; no other load since.
			var loads, begins int
			label := ""
			for _, q := range f.Requests() {
				if strings.HasSuffix(q.Path, "/api/transaction/commit") && q.Header.Get("label") != "" {
					label = q.Header.Get("label")
				}
			}
			for _, q := range f.Requests() {
				if q.Header.Get("label") != label {
					continue
				}
				switch {
				case q.Role == "BE" && strings.HasPrefix(q.Path, "/api/transaction/load"):
					loads++
				case strings.HasSuffix(q.Path, "/api/transaction/begin"):
					begins++
				}
			}
			if loads != 3 || begins != 1 {
				t.Errorf("the commit's label %s had %d begins and %d loads, want 1 and 3 (2 parts, the progress)", label, begins, loads)
			}
			if st := r.stop(); st.Commits != 1 || st.Txns != 3 {
				t.Errorf("%d commits of %d transactions, want 1 of 3", st.Commits, st.Txns)
			}
		})
	}
}

// TestStarRocksAutonomousFlushInvariant is the transaction-mode invariant
// test with the autonomous flush at work: the workload's files are
// followed and grow a piece at a time, the next piece once a commit
// landed, so that between commits chunks freeze and are loaded into the
// open transaction while a reader polling the cross-table invariant over
// the MySQL protocol runs. It never sees a source transaction in part,
// the commits carry parts, and the final state is exact, append-only
// rows once.
func TestStarRocksAutonomousFlushInvariant(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 400, Partitions: 4, Seed: 11, Events: true})
	f, db := starrocksFake(t, starrocksWorkload...)
	const pieces = 8
	dir := t.TempDir()
	var paths []string
	var files [][]string // each followed file's lines, to append
	for _, full := range writeWorkload(t, res) {
		b, err := os.ReadFile(full)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, strings.SplitAfter(string(b), "\n"))
		paths = append(paths, writeLines(t, dir, filepath.Base(full)+".follow", nil))
	}
	cfg := workloadPipeline(db, paths)
	cfg.Name = "starrocks-autoflush"
	cfg.Source.Set("follow", true)
	txnPipeline(cfg)
	cfg.Sink.FlushInterval = 100 * time.Millisecond
	cfg.Sink.TxnMiniSwitchInterval = time.Millisecond
	commits := make(chan *commit.Unit, 1024)
	e := newEngine(t, cfg, engine.WithCommitHook(func(u *commit.Unit) { commits <- u }))
	p := startPoller(t, db, workload.Invariant)
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- e.Run(ctx, engine.RunOptions{}) }()
	var units, parts int
	take := func() {
		t.Helper()
		select {
		case u := <-commits:
			units++
			parts += len(u.Parts)
		case err := <-runErr:
			t.Fatalf("Run ended: %v", err)
		}
	}
	for piece := range pieces {
		for i, lines := range files {
			from, to := piece*len(lines)/pieces, (piece+1)*len(lines)/pieces
			fh, err := os.OpenFile(paths[i], os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fh.WriteString(strings.Join(lines[from:to], "")); err != nil {
				t.Fatal(err)
			}
			fh.Close()
		}
		take()
	}
	for e.Stats().Txns < int64(res.Txns) {
		take()
	}
	cancel()
	if err := <-runErr; err != nil {
		t.Fatal(err)
	}
	polls, violations := p.finish(t)
	t.Logf("%d source transactions in %d commits carrying %d parts (%.1f loads per commit); reader polled %d times, saw %d invariant violations",
		res.Txns, units, parts, float64(loads(f))/float64(max(units, 1)), polls, violations)
	checkFinal(t, db, res)
	if violations != 0 {
		t.Errorf("the reader saw %d violations of the cross-table invariant", violations)
	}
	if polls < 2 || units < pieces {
		t.Errorf("too little overlap to mean anything: %d polls, %d commits", polls, units)
	}
	if parts <= units {
		t.Errorf("%d parts in %d commits: the autonomous flush loaded too little ahead of the commits", parts, units)
	}
}

// TestStarRocksAutonomousFlushFailedPart: a part whose load the fake
// answers 500 is only advice — no more parts are loaded ahead of that
// commit, and the commit loads the failed part again, with the rest, in a
// new transaction: the commit is whole, and nothing is applied twice.
func TestStarRocksAutonomousFlushFailedPart(t *testing.T) {
	f, db := starrocksFake(t, "CREATE TABLE t (id INT NOT NULL, v VARCHAR(10) NOT NULL) PRIMARY KEY (id) DISTRIBUTED BY HASH(id)")
	cfg := pipeline(db, config.Table{Source: "s.t"})
	cfg.Name = "autoflush-fail"
	cfg.Source.Set("follow", true)
	cfg.Sink.TxnEnabled = true
	cfg.Sink.FlushInterval = 10 * time.Second
	cfg.Sink.TxnMiniSwitchInterval = time.Second
	cfg.Sink.TxnMinSwitchBytes = 0
	r := newClockRun(t, cfg, []string{
		`{"op":"+I","table":"s.t","row":{"id":1,"v":"a"},"txn":"t1","txn_end":true}`,
		`{"op":"+I","table":"s.t","row":{"id":2,"v":"b"},"txn":"t2","txn_end":true}`,
	})
	// The claim at New is past: the next load is t1's part.
	f.Inject(starrocksfake.OpLoad, starrocksfake.HTTP500)
	r.start()
	r.awaitRead()
	r.awaitDeadline(clockStart.Add(time.Second))
	r.clock.Advance(time.Second)
	r.awaitDeadline(clockStart.Add(10 * time.Second))
	r.clock.Set(clockStart.Add(10 * time.Second))
	u := r.nextCommit()
	if len(u.Parts) != 1 || u.Changes != 2 {
		t.Errorf("the unit has %d parts and %d changes, want t1's failed part and 2 changes", len(u.Parts), u.Changes)
	}
	if got := query(t, db, "SELECT id FROM t ORDER BY id"); got != "1\n2" {
		t.Errorf("rows after the commit = %q, want 1 and 2", got)
	}
	intoT := 0
	for _, q := range f.Requests() {
		if q.Role == "BE" && strings.HasPrefix(q.Path, "/api/transaction/load") && q.Header.Get("table") == "t" {
			intoT++
		}
	}
	if intoT != 3 {
		t.Errorf("%d loads into t, want 3: t1's part answered 500, then at the commit t1's part again and t2's rows", intoT)
	}
	if st := r.stop(); st.Commits != 1 || st.Txns != 2 || st.Retries != 0 {
		t.Errorf("%d commits of %d transactions, %d retries; want 1 of 2, none (a part's failure is not the unit's)", st.Commits, st.Txns, st.Retries)
	}
}
