package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/format/native"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
	"github.com/txsink/txsink/source/file"
	"github.com/txsink/txsink/txn"
)

// txnPipeline turns transaction mode on with short intervals, so a test
// sees many commits.
func txnPipeline(cfg *config.Config) *config.Config {
	cfg.Sink.TxnEnabled = true
	cfg.Sink.FlushInterval = 20 * time.Millisecond
	cfg.Sink.TxnMiniSwitchInterval = 5 * time.Millisecond
	cfg.Sink.TxnMinSwitchBytes = 0
	return cfg
}

// poller runs query on db until stopped, counting polls and the rows the
// query counts (violations).
type poller struct {
	polls, violations atomic.Int64
	stop              chan struct{}
	done              sync.WaitGroup
	err               atomic.Value
}

func startPoller(t *testing.T, db *testdb.DB, query string) *poller {
	t.Helper()
	return startChecker(t, func() (int64, error) {
		var n int64
		err := db.SQL.QueryRow(query).Scan(&n)
		return n, err
	})
}

// startChecker runs check until stopped, as startPoller runs its query:
// each call returns the violations it saw. check runs on the poller's
// goroutine alone.
func startChecker(t *testing.T, check func() (int64, error)) *poller {
	t.Helper()
	p := &poller{stop: make(chan struct{})}
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		for {
			select {
			case <-p.stop:
				return
			default:
			}
			n, err := check()
			if err != nil {
				p.err.Store(err)
				return
			}
			p.polls.Add(1)
			p.violations.Add(n)
		}
	}()
	return p
}

func (p *poller) finish(t *testing.T) (polls, violations int64) {
	t.Helper()
	close(p.stop)
	p.done.Wait()
	if err, ok := p.err.Load().(error); ok {
		t.Fatalf("poller: %v", err)
	}
	return p.polls.Load(), p.violations.Load()
}

// TestTransactionModeInvariant applies a 4-partition workload of
// thousands of multi-table source transactions while a reader polls a
// cross-table invariant (an order's amount is the sum of its items; no
// item without its order) that every source transaction keeps. In
// transaction mode the reader never sees it broken. The same run in plain
// mode, flushing every few rows, is shown for contrast.
func TestTransactionModeInvariant(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 1500, Partitions: 4, Seed: 9, Events: true})
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, workload.Schema(db.Dialect)...)
		paths := writeWorkload(t, res)
		for _, mode := range []string{"transaction", "plain"} {
			for _, tbl := range workload.Tables {
				db.Exec(t, "DELETE FROM "+tbl)
			}
			cfg := workloadPipeline(db, paths)
			cfg.Name = "invariant-" + mode
			if mode == "transaction" {
				txnPipeline(cfg)
				// Many commits whatever the machine's speed: a small
				// buffer cuts them, the interval alone may not.
				cfg.Sink.TxnBufferSize = 64 << 10
			} else {
				cfg.Sink.FlushMaxRows = 7
			}
			r := runPolled(t, cfg, db)
			t.Logf("%s mode: %d source transactions in %d commits; reader polled %d times, saw %d invariant violations",
				mode, r.stats.Txns, r.commits, r.polls, r.violations)
			checkFinal(t, db, res)
			if mode == "transaction" {
				r.checkInvariant(t)
				if r.stats.Txns != int64(res.Txns) {
					t.Errorf("committed %d source transactions, want %d", r.stats.Txns, res.Txns)
				}
			}
		}
	})
}

// polledRun is a run under a reader polling workload.Invariant.
type polledRun struct {
	stats                      engine.Stats
	commits, polls, violations int64
	// parts counts the parts the units carried, loaded ahead of their
	// commits (commit.Unit.Parts: a target that streams).
	parts int64
}

// runPolled runs cfg to its end while a reader polls workload.Invariant
// on db.
func runPolled(t *testing.T, cfg *config.Config, db *testdb.DB) polledRun {
	t.Helper()
	var commits, parts atomic.Int64
	e := newEngine(t, cfg, engine.WithCommitHook(func(u *commit.Unit) { commits.Add(1); parts.Add(int64(len(u.Parts))) }))
	p := startPoller(t, db, workload.Invariant)
	if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	polls, violations := p.finish(t)
	return polledRun{stats: e.Stats(), commits: commits.Load(), polls: polls, violations: violations, parts: parts.Load()}
}

// checkInvariant fails t when the reader saw the invariant broken, or
// polled too little beside too few commits to mean anything.
func (r polledRun) checkInvariant(t *testing.T) {
	t.Helper()
	if r.violations != 0 {
		t.Errorf("transaction mode: the reader saw %d violations of the cross-table invariant", r.violations)
	}
	if r.polls < 2 || r.commits < 5 {
		t.Errorf("too little overlap to mean anything: %d polls, %d commits", r.polls, r.commits)
	}
}

// TestSeed000Section19 is seed 000's experiment: with max-rows 1, a -D/+I
// pair of one key in one source transaction. Without transaction mode the
// delete is committed on its own, and the row is missing between two
// commits; in transaction mode the pair is one commit and the row is never
// missing, as a reader polling it finds.
func TestSeed000Section19(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, `CREATE TABLE orders_rt (id INT NOT NULL PRIMARY KEY, amount INT NOT NULL)`)
		var lines []byte
		add := func(c changelog.Change) {
			c.Table = changelog.Table{Namespace: "shop", Name: "orders_rt"}
			var err error
			if lines, err = native.Append(lines, &c); err != nil {
				t.Fatal(err)
			}
		}
		const pairs = 300
		for i := 1; i <= pairs; i++ {
			id := fmt.Sprint("t", i)
			add(changelog.Change{Kind: changelog.Delete, Before: row("id", int64(1001)), TxnID: id})
			add(changelog.Change{Kind: changelog.Insert, After: row("id", int64(1001), "amount", int64(80+i)), TxnID: id, TxnEnd: true})
		}
		path := filepath.Join(t.TempDir(), "pairs.jsonl")
		if err := os.WriteFile(path, lines, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, mode := range []string{"plain", "transaction"} {
			// The row exists before the run, so any moment a reader
			// finds it missing is a gap.
			db.Exec(t, "DELETE FROM orders_rt", "INSERT INTO orders_rt (id, amount) VALUES (1001, 80)")
			cfg := pipeline(db, config.Table{Source: "shop.orders_rt"})
			cfg.Name = "seed19-" + mode
			cfg.Source.Set("paths", []string{path})
			cfg.Sink.FlushMaxRows = 1
			// The Flink JDBC sink's flushing: every row its own commit.
			cfg.Sink.FlushCoalesce = false
			if mode == "transaction" {
				// A buffer of one byte is always full: every source
				// transaction is committed as soon as it ends, the
				// transaction-mode counterpart of max-rows 1.
				txnPipeline(cfg)
				cfg.Sink.TxnMiniSwitchInterval = 0
				cfg.Sink.TxnBufferSize = 1
			}
			// After every commit, look: is row 1001 there?
			var missingAfterCommit atomic.Int64
			var commits atomic.Int64
			e := newEngine(t, cfg, engine.WithCommitHook(func(*commit.Unit) {
				commits.Add(1)
				var n int
				if err := db.SQL.QueryRow("SELECT COUNT(*) FROM orders_rt WHERE id = 1001").Scan(&n); err != nil {
					t.Error(err)
				}
				if n == 0 {
					missingAfterCommit.Add(1)
				}
			}))
			p := startPoller(t, db, "SELECT 1 - COUNT(*) FROM orders_rt WHERE id = 1001")
			if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
				t.Fatal(err)
			}
			polls, misses := p.finish(t)
			t.Logf("%s mode: %d commits, row missing after %d of them; a reader polled it %d times and found it missing %d times",
				mode, commits.Load(), missingAfterCommit.Load(), polls, misses)
			if got := query(t, db, "SELECT amount FROM orders_rt WHERE id = 1001"); got != fmt.Sprint(80+pairs) {
				t.Errorf("%s mode: final amount %s, want %d", mode, got, 80+pairs)
			}
			switch mode {
			case "plain":
				if missingAfterCommit.Load() != pairs {
					t.Errorf("plain mode with max-rows 1: row missing after %d commits, want after each of the %d deletes", missingAfterCommit.Load(), pairs)
				}
			case "transaction":
				if commits.Load() < pairs/2 {
					t.Errorf("transaction mode: %d commits for %d transactions; the test wants about one each", commits.Load(), pairs)
				}
				if missingAfterCommit.Load() != 0 || misses != 0 {
					t.Errorf("transaction mode: the row was missing after %d commits, and %d times to the reader", missingAfterCommit.Load(), misses)
				}
			}
		}
	})
}

// TestTransactionModeResume stops a transaction-mode pipeline between and
// inside commits, again and again: the final state is exact, the
// append-only table has no duplicate, and no source transaction is ever
// partly visible (the invariant holds after every commit).
func TestTransactionModeResume(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 300, Partitions: 3, Seed: 21, Events: true})
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, workload.Schema(db.Dialect)...)
		cfg := txnPipeline(workloadPipeline(db, writeWorkload(t, res)))
		cfg.Sink.FlushInterval = 2 * time.Millisecond
		cfg.Sink.TxnMiniSwitchInterval = 0
		for run := 0; run < 40; run++ {
			final := run >= 30
			stopAt := 1 + run%5
			inside := run%2 == 0
			ctx, cancel := context.WithCancel(context.Background())
			commits := 0
			e, err := engine.New(context.Background(), cfg,
				engine.WithCommitHook(func(*commit.Unit) {
					commits++
					if got := query(t, db, workload.Invariant); got != "0" {
						t.Errorf("run %d: invariant broken after a commit: %s violations", run, got)
					}
					if !final && !inside && commits >= stopAt {
						cancel()
					}
				}),
				engine.WithBeforeCommitHook(func(*commit.Unit) error {
					if !final && inside && commits+1 >= stopAt {
						return errCrash
					}
					return nil
				}))
			if err != nil {
				t.Fatal(err)
			}
			err = e.Run(ctx, engine.RunOptions{})
			e.Close()
			cancel()
			if err != nil && !strings.Contains(err.Error(), errCrash.Error()) {
				t.Fatalf("run %d: %v", run, err)
			}
			if final {
				if err != nil {
					t.Fatalf("final run: %v", err)
				}
				checkFinal(t, db, res)
				return
			}
		}
	})
}

// debeziumWithTxns writes a partition of the workload as Debezium JSON
// with transaction metadata: BEGIN, the data events carrying
// transaction.id, and END with the event count. drop, if >= 0, leaves out
// that data event, as a lossy pipeline would.
func debeziumWithTxns(t *testing.T, changes []changelog.Change, drop int) string {
	t.Helper()
	var b strings.Builder
	image := func(r changelog.Row) string {
		if r.IsZero() {
			return "null"
		}
		parts := make([]string, len(r.Names))
		for i, n := range r.Names {
			var v string
			switch x := r.Values[i].(type) {
			case nil:
				v = "null"
			case changelog.Number:
				v = string(x)
			case string:
				v = fmt.Sprintf("%q", x)
			default:
				t.Fatalf("unexpected value %T", x)
			}
			parts[i] = fmt.Sprintf("%q:%s", n, v)
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	events, n := 0, 0
	for i, c := range changes {
		if c.Kind == changelog.UpdateBefore {
			continue // Debezium has no separate -U event
		}
		if events == 0 {
			fmt.Fprintf(&b, `{"status":"BEGIN","id":"%s:1","event_count":null}`+"\n", c.TxnID)
		}
		events++
		if i != drop {
			n++
			op := map[changelog.Kind]string{changelog.Insert: "c", changelog.UpdateAfter: "u", changelog.Delete: "d"}[c.Kind]
			fmt.Fprintf(&b, `{"before":%s,"after":%s,"source":{"connector":"mysql","db":"%s","table":"%s"},"op":"%s","transaction":{"id":"%s:1","total_order":%d,"data_collection_order":1}}`+"\n",
				image(c.Before), image(c.After), c.Table.Namespace, c.Table.Name, op, c.TxnID, events)
		}
		if c.TxnEnd {
			fmt.Fprintf(&b, `{"status":"END","id":"%s:1","event_count":%d,"data_collections":[]}`+"\n", c.TxnID, events)
			events = 0
		}
	}
	path := filepath.Join(t.TempDir(), "debezium.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTransactionModeDebeziumBoundaries assembles source transactions from
// Debezium's BEGIN/END events in one stream, and refuses a transaction
// whose END counts more events than arrived.
func TestTransactionModeDebeziumBoundaries(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 200, Partitions: 1, Seed: 4})
	db := testdb.SQLite(t)
	db.Exec(t, workload.Schema("sqlite")...)
	cfg := txnPipeline(workloadPipeline(db, []string{debeziumWithTxns(t, res.Partitions[0], -1)}))
	cfg.Source.Format = "debezium-json"
	e := newEngine(t, cfg, engine.WithCommitHook(func(*commit.Unit) {
		if got := query(t, db, workload.Invariant); got != "0" {
			t.Errorf("invariant broken after a commit: %s violations", got)
		}
	}))
	if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	checkFinal(t, db, res)
	if st := e.Stats(); st.Txns != int64(res.Txns) {
		t.Errorf("%d source transactions committed, want %d", st.Txns, res.Txns)
	}

	lossy := testdb.SQLite(t)
	lossy.Exec(t, workload.Schema("sqlite")...)
	cfg = txnPipeline(workloadPipeline(lossy, []string{debeziumWithTxns(t, res.Partitions[0], 40)}))
	cfg.Source.Format = "debezium-json"
	err := newEngine(t, cfg).Run(context.Background(), engine.RunOptions{})
	if err == nil || !strings.Contains(err.Error(), "END event counts") || !strings.Contains(err.Error(), "debezium.jsonl:") {
		t.Fatalf("a transaction missing an event: err = %v, want the END count refusal with its position", err)
	}
	t.Logf("refusal: %v", err)
}

// TestTransactionModeDebeziumCopies drops the copies of events a source
// published again, known by Debezium's transaction metadata, as Debezium
// Server writes them after its restart: a whole transaction again, a
// transaction's first events again before its END, and its last events
// and END again after it. The target is exact and every transaction is
// committed once.
func TestTransactionModeDebeziumCopies(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 200, Partitions: 1, Seed: 4})
	raw, err := os.ReadFile(debeziumWithTxns(t, res.Partitions[0], -1))
	if err != nil {
		t.Fatal(err)
	}
	// The transactions, each its lines from BEGIN to END.
	var txns [][]string
	for _, line := range strings.SplitAfter(string(raw), "\n") {
		if strings.HasPrefix(line, `{"status":"BEGIN"`) {
			txns = append(txns, nil)
		}
		if line != "" {
			txns[len(txns)-1] = append(txns[len(txns)-1], line)
		}
	}
	var out []string
	copied := 0
	for _, tx := range txns {
		if len(tx) < 5 || copied == 3 { // copies of transactions of three events or more
			out = append(out, tx...)
			continue
		}
		switch copied {
		case 0: // whole, again
			out = append(append(out, tx...), tx...)
		case 1: // BEGIN and two events, then from the first event again to END
			out = append(append(out, tx[:3]...), tx[1:]...)
		case 2: // whole, then from the second event again, and END
			out = append(append(out, tx...), tx[2:]...)
		}
		copied++
	}
	if copied < 3 {
		t.Fatalf("the workload has %d transactions of three events or more, want 3", copied)
	}
	path := filepath.Join(t.TempDir(), "copies.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(out, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	db := testdb.SQLite(t)
	db.Exec(t, workload.Schema("sqlite")...)
	cfg := txnPipeline(workloadPipeline(db, []string{path}))
	cfg.Source.Format = "debezium-json"
	e := newEngine(t, cfg)
	if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	checkFinal(t, db, res)
	if st := e.Stats(); st.Txns != int64(res.Txns) {
		t.Errorf("%d source transactions committed, want %d: a copy was applied", st.Txns, res.Txns)
	}
}

// TestTransactionModeBoundedMemory runs a workload through a transaction
// buffer far smaller than the workload: reading waits for commits (back-
// pressure), the buffered bytes never pass twice the buffer size by more
// than one change, and the result is exact.
func TestTransactionModeBoundedMemory(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 500, Partitions: 4, Seed: 17, Events: true})
	db := testdb.SQLite(t)
	db.Exec(t, workload.Schema("sqlite")...)
	paths := writeWorkload(t, res)
	cfg := txnPipeline(workloadPipeline(db, paths))
	cfg.Sink.FlushInterval = time.Hour // only memory pressure and the end of input commit
	const bufferSize = 8 << 10
	cfg.Sink.TxnBufferSize = bufferSize
	var total int64
	for _, p := range paths {
		fi, _ := os.Stat(p)
		total += fi.Size()
	}
	var peak int64
	var e *engine.Engine
	e = newEngine(t, cfg, engine.WithCommitHook(func(*commit.Unit) {
		peak = max(peak, e.Status().BufferedBytes)
	}))
	if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	checkFinal(t, db, res)
	st := e.Stats()
	t.Logf("%d bytes of changelog through a %d-byte buffer: %d commits, peak %d bytes buffered", total, bufferSize, st.Commits, peak)
	if st.Commits < 10 {
		t.Errorf("only %d commits: the buffer limit did not cut commits", st.Commits)
	}
	// A change is at most a few hundred bytes in this workload.
	if peak > 2*bufferSize+4096 {
		t.Errorf("peak buffered bytes %d, want at most about 2 x %d", peak, bufferSize)
	}
}

// TestTransactionModeCountsRows checks what buffer-flush.max-rows counts
// in transaction mode: rows after per-key reduction, as plain mode counts
// its buffer. Changes of one hot key add one row however many there are;
// distinct keys one each; an update that moves a row to another key two
// (the row it leaves is deleted). Only the size trigger and the end of
// input cut commits here, so the count of commits tells what was counted.
func TestTransactionModeCountsRows(t *testing.T) {
	const txns, maxRows = 100, 10
	cases := []struct {
		name    string
		change  func(i int) changelog.Change
		commits int64
	}{
		{"one hot key", func(i int) changelog.Change {
			return changelog.Change{Kind: changelog.Insert, After: row("id", int64(1), "v", int64(i))}
		}, 1},
		{"distinct keys", func(i int) changelog.Change {
			return changelog.Change{Kind: changelog.Insert, After: row("id", int64(i), "v", int64(i))}
		}, txns / maxRows},
		{"moved rows", func(i int) changelog.Change {
			return changelog.Change{Kind: changelog.UpdateAfter, Before: row("id", int64(i), "v", int64(0)), After: row("id", int64(1000+i), "v", int64(i))}
		}, 2 * txns / maxRows},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := testdb.SQLite(t)
			db.Exec(t, `CREATE TABLE counted (id INTEGER NOT NULL PRIMARY KEY, v INTEGER NOT NULL)`)
			var changes []changelog.Change
			for i := 1; i <= txns; i++ {
				c := tc.change(i)
				c.TxnID, c.TxnEnd = fmt.Sprint("t", i), true
				changes = append(changes, c)
			}
			path := writeChanges(t, "counted", changes)
			cfg := txnPipeline(pipeline(db, config.Table{Source: "shop.counted"}))
			cfg.Source.Set("paths", []string{path})
			cfg.Sink.FlushInterval = time.Hour // only max-rows and the end of input commit
			cfg.Sink.FlushMaxRows = maxRows
			cfg.Sink.FlushCoalesce = false // commits cut at max-rows only
			e := newEngine(t, cfg)
			if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
				t.Fatal(err)
			}
			if got := e.Stats().Commits; got != tc.commits {
				t.Errorf("%d commits for %d transactions with max-rows %d, want %d", got, txns, maxRows, tc.commits)
			}
		})
	}
}

// TestTransactionModeAcrossDatabases commits one source transaction into
// tables of two MariaDB databases on one server, atomically.
func TestTransactionModeAcrossDatabases(t *testing.T) {
	db := testdb.MySQL(t)
	other := "txsink_x" + strings.TrimPrefix(query(t, db, "SELECT DATABASE()"), "txsink_t")
	db.Exec(t, "CREATE DATABASE "+other,
		"CREATE TABLE orders (id INT NOT NULL PRIMARY KEY, total INT NOT NULL)",
		"CREATE TABLE "+other+".ledger (order_id INT NOT NULL PRIMARY KEY, amount INT NOT NULL)")
	t.Cleanup(func() { db.SQL.Exec("DROP DATABASE IF EXISTS " + other) })
	lines := `{"op":"+I","table":"shop.orders","row":{"id":1,"total":5},"txn":"t1"}
{"op":"+I","table":"finance.ledger","row":{"order_id":1,"amount":5},"txn":"t1","txn_end":true}
`
	path := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := txnPipeline(pipeline(db, config.Table{Source: "shop.orders"}, config.Table{Source: "finance.ledger", Target: other + ".ledger"}))
	cfg.Source.Set("paths", []string{path})
	var units []*commit.Unit
	e := newEngine(t, cfg, engine.WithCommitHook(func(u *commit.Unit) { units = append(units, u) }))
	if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(units) != 1 || len(units[0].Batches) != 2 {
		t.Fatalf("want one unit over two tables, got %d units", len(units))
	}
	if got := query(t, db, "SELECT o.total, l.amount FROM orders o JOIN "+other+".ledger l ON l.order_id = o.id"); got != "5|5" {
		t.Errorf("joined = %q", got)
	}
}

// TestTransactionModeBadChange: a change that cannot be reduced (here an
// insert without its key) fails the plan whose transaction holds it, once
// the plans before it have committed. Its transaction's other changes are
// not committed either, and the error names the change's position: the
// transaction is reduced as it ends, and the error waits in its chunk
// until the plan holding it is cut.
func TestTransactionModeBadChange(t *testing.T) {
	db := testdb.SQLite(t)
	db.Exec(t, `CREATE TABLE checked (id INTEGER NOT NULL PRIMARY KEY, v INTEGER NOT NULL)`)
	changes := []changelog.Change{
		{Kind: changelog.Insert, After: row("id", int64(1), "v", int64(1)), TxnID: "t1", TxnEnd: true},
		{Kind: changelog.Insert, After: row("id", int64(2), "v", int64(2)), TxnID: "t2", TxnEnd: true},
		{Kind: changelog.Insert, After: row("id", int64(3), "v", int64(3)), TxnID: "t3"},
		{Kind: changelog.Insert, After: row("v", int64(4)), TxnID: "t3", TxnEnd: true}, // no key
		{Kind: changelog.Insert, After: row("id", int64(5), "v", int64(5)), TxnID: "t4", TxnEnd: true},
	}
	path := writeChanges(t, "checked", changes)
	cfg := txnPipeline(pipeline(db, config.Table{Source: "shop.checked"}))
	cfg.Source.Set("paths", []string{path})
	cfg.Sink.FlushInterval = time.Hour
	cfg.Sink.FlushMaxRows = 1 // a plan per transaction
	cfg.Sink.FlushCoalesce = false
	e := newEngine(t, cfg)
	err := e.Run(context.Background(), engine.RunOptions{})
	if err == nil {
		t.Fatal("the run succeeded over a change without its key")
	}
	for _, want := range []string{"changes.jsonl:4", "id"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if got := query(t, db, "SELECT id FROM checked ORDER BY id"); got != "1\n2" {
		t.Errorf("rows after the failed run:\n%s\nwant t1's and t2's, ids 1 and 2", got)
	}
	if got := e.Stats().Commits; got != 2 {
		t.Errorf("%d commits, want t1's and t2's", got)
	}
}

// writeChanges writes changes, as changes of table shop.<table>, to a
// txsink-json file changes.jsonl of its own, and returns its path.
func writeChanges(t *testing.T, table string, changes []changelog.Change) string {
	t.Helper()
	var lines []byte
	for i := range changes {
		c := changes[i]
		c.Table = changelog.Table{Namespace: "shop", Name: table}
		var err error
		if lines, err = native.Append(lines, &c); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "changes.jsonl")
	if err := os.WriteFile(path, lines, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTransactionModeMaxTxnBytes: a source transaction whose decoded
// changes take more memory than max-txn-bytes, which is buffer-size
// unless set, stops the pipeline naming the transaction, its partition
// and first position, and both options; nothing of it is committed. Set
// larger, or unlimited, the same transaction is applied.
func TestTransactionModeMaxTxnBytes(t *testing.T) {
	const big = 5000 // changes of transaction t2, about 40 decode jobs
	changes := []changelog.Change{
		{Kind: changelog.Insert, After: row("id", int64(1), "v", "one"), TxnID: "t1", TxnEnd: true},
	}
	for i := range big {
		changes = append(changes, changelog.Change{Kind: changelog.Insert, TxnID: "t2", TxnEnd: i == big-1,
			After: row("id", int64(100+i), "v", strings.Repeat("x", 100))})
	}
	path := writeChanges(t, "wide", changes)
	tests := []struct {
		name       string
		bufferSize int64
		maxTxn     int64
		refused    bool
	}{
		{"auto, smaller than the transaction", 256 << 10, config.MaxTxnBytesAuto, true},
		{"set, smaller than the transaction", 64 << 20, 256 << 10, true},
		{"auto, larger than the transaction", 64 << 20, config.MaxTxnBytesAuto, false},
		{"unlimited", 256 << 10, 0, false},
	}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, `CREATE TABLE wide (id INT NOT NULL PRIMARY KEY, v VARCHAR(200) NOT NULL)`)
		for i, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				db.Exec(t, "DELETE FROM wide")
				cfg := txnPipeline(pipeline(db, config.Table{Source: "shop.wide"}))
				cfg.Name = fmt.Sprintf("maxtxn-%d", i) // progress of its own
				cfg.Source.Set("paths", []string{path})
				cfg.Sink.TxnBufferSize, cfg.Sink.TxnMaxTxnBytes = tc.bufferSize, tc.maxTxn
				err := newEngine(t, cfg).Run(context.Background(), engine.RunOptions{})
				t2 := query(t, db, "SELECT COUNT(*) FROM wide WHERE id >= 100")
				if !tc.refused {
					if err != nil || t2 != fmt.Sprint(big) {
						t.Fatalf("err = %v, %s rows of t2; want it applied whole", err, t2)
					}
					return
				}
				var te *txn.Error
				if !errors.As(err, &te) || !errors.Is(err, txn.ErrMaxTxnBytes) || te.TxnID != "t2" || te.Start.Seq != 2 {
					t.Fatalf("err = %v; want a max-txn-bytes refusal of t2, started at line 2", err)
				}
				for _, want := range []string{"changes.jsonl:2)", "partition " + te.Partition, "transaction t2",
					"sink.transaction.multi-table.max-txn-bytes", "sink.transaction.multi-table.buffer-size", "unlimited", "split the transaction upstream"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("the refusal lacks %q: %v", want, err)
					}
				}
				if t2 != "0" {
					t.Errorf("%s rows of the refused transaction were committed", t2)
				}
			})
		}
	})
}

// TestTransactionModeUnfinishedAtEnd: a source transaction whose end is
// not in the input is not committed, and Run says so: Stats and Status
// name it, where it starts and how many changes it has, and that the input
// ended. Its end appended, the next run applies it, read again from the
// stored progress.
func TestTransactionModeUnfinishedAtEnd(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, `CREATE TABLE checked (id INT NOT NULL PRIMARY KEY, v INT NOT NULL)`)
		changes := []changelog.Change{
			{Kind: changelog.Insert, After: row("id", int64(1), "v", int64(1)), TxnID: "t1", TxnEnd: true},
			{Kind: changelog.Insert, After: row("id", int64(2), "v", int64(2)), TxnID: "t2"},
			{Kind: changelog.Insert, After: row("id", int64(3), "v", int64(3)), TxnID: "t2"},
		}
		path := writeChanges(t, "checked", changes)
		cfg := txnPipeline(pipeline(db, config.Table{Source: "shop.checked"}))
		cfg.Source.Set("paths", []string{path})
		e := newEngine(t, cfg)
		if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		st := e.Stats()
		part := file.Name(path, "")
		want := []engine.OpenTxn{{Partition: part, TxnID: "t2", StartOffset: st.Unfinished[0].StartOffset, StartSeq: 2, Changes: 2}}
		if !slices.Equal(st.Unfinished, want) || !st.EndOfInput || st.Unfinished[0].StartOffset <= 0 {
			t.Errorf("Stats: unfinished %+v, end of input %v; want %+v at the end of input", st.Unfinished, st.EndOfInput, want)
		}
		if got := e.Status().Open; !slices.Equal(got, want) {
			t.Errorf("Status().Open = %+v, want %+v", got, want)
		}
		if s := want[0].String(); s != "transaction t2 from "+part+":2 (2 changes)" {
			t.Errorf("OpenTxn.String() = %q", s)
		}
		if got := query(t, db, "SELECT id FROM checked ORDER BY id"); got != "1" {
			t.Errorf("rows after the first run:\n%s\nwant t1's alone", got)
		}

		end := changelog.Change{Kind: changelog.Insert, After: row("id", int64(4), "v", int64(4)), TxnID: "t2", TxnEnd: true,
			Table: changelog.Table{Namespace: "shop", Name: "checked"}}
		line, err := native.Append(nil, &end)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(line); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		e2 := newEngine(t, cfg)
		if err := e2.Run(context.Background(), engine.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		if st := e2.Stats(); len(st.Unfinished) != 0 || st.Txns != 1 {
			t.Errorf("the rerun left %+v open and committed %d transactions; want none open, t2 committed", st.Unfinished, st.Txns)
		}
		if got := query(t, db, "SELECT id FROM checked ORDER BY id"); got != "1\n2\n3\n4" {
			t.Errorf("rows after the rerun:\n%s\nwant t1's and t2's", got)
		}
	})
}
