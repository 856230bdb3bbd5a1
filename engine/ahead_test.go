package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/clock/clocktest"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/reduce"
)

// TestReducedAhead: each transaction is reduced as it ends, into its
// partition's chunk to be, and a plan's unit is the merge of its chunks'
// reductions, made without reducing anything at the cut, whether the plan
// holds every finished transaction or leaves some for the next (a
// partition's last transactions not frozen yet). Either way each unit is
// what reducing the plan's changes, in its order, gives.
func TestReducedAhead(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		// steps are the times of rounds of transactions, one per partition
		// each; a plan is then cut at cut, without flush unless flush.
		steps []time.Duration
		cut   time.Duration
		flush bool
		plans int
	}{
		{"the plan holds every finished transaction", []time.Duration{0, 0, 0, 0}, 0, true, 1},
		// The first transaction of each partition freezes at once; the one
		// 950ms later waits for the mini-switch interval (100ms), so the
		// commit interval's plan (1s) holds only the first.
		{"the plan leaves transactions for the next", []time.Duration{0, 950 * time.Millisecond}, time.Second, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			clock := clocktest.New(t0)
			l, _ := aheadLoop(t, "ahead", clock)
			seq := int64(0)
			stepped := map[string][]*changelog.Change{}
			for _, at := range tc.steps {
				clock.Set(t0.Add(at))
				for i, part := range []string{"p0", "p1"} {
					seq++
					// Keys repeat, so the unit reduces them; each
					// partition has keys of its own, as one key's
					// changes must stay in one partition.
					stepped[part] = append(stepped[part], recordTxn(t, l, part, seq, seq%3+10*int64(i)))
				}
			}
			// Every transaction ended, reduced: the machine holds none of
			// their changes, and no arena is held for them.
			if l.release(); len(l.held) != 0 || l.m.OpenTxns() != 0 {
				t.Fatalf("every transaction ended, but %d arenas are held and %d transactions open", len(l.held), l.m.OpenTxns())
			}
			cuts := 0
			for flush := tc.flush; ; flush = true {
				clock.Set(t0.Add(tc.cut))
				plan := l.m.Ready(clock.Now(), flush)
				if plan == nil {
					break
				}
				// What reducing the plan's changes gives: per partition,
				// in the plan's order, those up to its progress.
				want := &reduced{buf: reduce.NewBuffer("ahead")}
				for _, pos := range plan.Progress {
					var take []*changelog.Change
					for len(stepped[pos.Partition]) > 0 && stepped[pos.Partition][0].Pos.Offset <= pos.Offset {
						take = append(take, stepped[pos.Partition][0])
						stepped[pos.Partition] = stepped[pos.Partition][1:]
					}
					if err := l.add(ctx, want, take, clock.Now()); err != nil {
						t.Fatal(err)
					}
				}
				u, txns, err := l.unit(plan)
				if err != nil {
					t.Fatal(err)
				}
				if txns != plan.Txns {
					t.Errorf("%d transactions, want the plan's %d", txns, plan.Txns)
				}
				if got, want := describeUnit(u), describeUnit(want.buf.Take()); got != want {
					t.Errorf("plan %d, unit:\n%s\nwant what reducing the plan gives:\n%s", cuts+1, got, want)
				}
				l.m.Advance(plan)
				cuts++
			}
			if cuts != tc.plans {
				t.Errorf("%d plans, want %d", cuts, tc.plans)
			}
			for part, left := range stepped {
				if len(left) > 0 {
					t.Errorf("%s: %d transactions in no plan", part, len(left))
				}
			}
		})
	}
}

// describeUnit renders what a unit writes and how far it moves progress.
func describeUnit(u *commit.Unit) string {
	s := fmt.Sprintf("changes %d, progress %v", u.Changes, u.Progress)
	for _, b := range u.Batches {
		s += fmt.Sprintf("\n%+v", *b)
	}
	return s
}

// TestTickWhileCommitting: while a plan commits, a partition that has been
// quiet for the mini-switch interval switches its chunk at the loop's
// tick, so the loop's deadline moves past now. A deadline left in the
// past fired Run's timer again at once, and Run's loop spun for as long as
// the commit took (under callgrind, 97% of a transaction-mode run's
// instructions went to that loop).
func TestTickWhileCommitting(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := clocktest.New(t0)
	l, db := aheadLoop(t, "tick", clock)
	seq := int64(0)
	txn := func(part string) {
		t.Helper()
		seq++
		recordTxn(t, l, part, seq, seq)
	}
	// A plan of p0's transaction is in flight, as on Run's committer.
	txn("p0")
	l.inflight = l.m.Ready(clock.Now(), true)
	if l.inflight == nil {
		t.Fatal("no plan for p0's transaction")
	}
	// p1's transactions end while it commits (a partition's first one
	// freezes at once, the next waits for the mini-switch interval); then
	// p1 is quiet.
	txn("p1")
	clock.Set(t0.Add(50 * time.Millisecond))
	txn("p1")
	clock.Set(t0.Add(300 * time.Millisecond))
	if err := l.tick(ctx); err != nil {
		t.Fatal(err)
	}
	if next, ok := l.deadline(); ok && !next.After(clock.Now()) {
		t.Fatalf("after a tick, with a plan in flight, the next deadline is %v, not after now (%v): Run's timer would fire again at once",
			next.Sub(t0), clock.Now().Sub(t0))
	}
	// Once the plan is committed, p1's transaction is the next plan's.
	l.committed.Store(true)
	clock.Set(t0.Add(1100 * time.Millisecond))
	if err := l.tick(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.SQL.QueryRow(`SELECT COUNT(*) FROM ahead`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("%d rows committed after the tick, want p1's 2 (p0's plan was never applied here)", n)
	}
}

// aheadLoop returns a transaction loop on clock over the SQLite table
// ahead (id, v) of source table s.ahead, whose plans are cut by the
// commit interval (1s) and at the end, never by rows.
func aheadLoop(t *testing.T, name string, clock *clocktest.Clock) (*txnLoop, *testdb.DB) {
	t.Helper()
	db := testdb.SQLite(t)
	db.Exec(t, `CREATE TABLE ahead (id INTEGER NOT NULL PRIMARY KEY, v INTEGER NOT NULL)`)
	cfg := config.Default()
	cfg.Name = name
	cfg.Source = config.Source{Type: "file", Format: "txsink-json"}
	cfg.Target.URL = db.URL
	cfg.Tables = []config.Table{{Source: "s.ahead"}}
	cfg.Sink.TxnEnabled = true
	cfg.Sink.FlushMaxRows = 1 << 20
	cfg.Sink.FlushInterval = time.Second
	cfg.Sink.TxnMinSwitchBytes = 1 << 20
	e, err := New(context.Background(), &cfg, WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	l, err := e.newTxnLoop()
	if err != nil {
		t.Fatal(err)
	}
	return l, db
}

// recordTxn has l take a source transaction of one insert into s.ahead,
// of key id, at offset seq of part, decoded into an arena of its own, and
// returns a copy of the change.
func recordTxn(t *testing.T, l *txnLoop, part string, seq, id int64) *changelog.Change {
	t.Helper()
	c := changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Namespace: "s", Name: "ahead"},
		After: changelog.RowOf("id", id, "v", seq), TxnID: fmt.Sprint("t", seq), TxnEnd: true,
		Pos: changelog.Position{Partition: part, Offset: seq, Seq: seq}, Size: 10}
	if err := l.record(context.Background(), &decoded{pos: c.Pos, changes: []changelog.Change{c}, mem: new(changelog.Arena)}); err != nil {
		t.Fatal(err)
	}
	return &c
}

// TestForgetOpenTransaction: a partition given up in the middle of a
// source transaction, then read again from the stored progress (its new
// owner being this loop again), counts the transaction's events afresh:
// its END, which says how many it had, then matches.
func TestForgetOpenTransaction(t *testing.T) {
	ctx := context.Background()
	l, _ := aheadLoop(t, "forget", clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	event := func(off int64) *changelog.Change {
		return &changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Namespace: "s", Name: "ahead"},
			After: changelog.RowOf("id", off, "v", off), TxnID: "t1", Pos: changelog.Position{Partition: "k/0", Offset: off}, Size: 10}
	}
	end := &changelog.Change{Kind: changelog.EndTxn, TxnID: "t1", TxnEnd: true, TxnEvents: 2, Pos: changelog.Position{Partition: "k/0", Offset: 3}}
	if err := l.check(ctx, event(1), true); err != nil {
		t.Fatal(err)
	}
	l.m.Drop("k/0")
	l.forget("k/0")
	// Read again from the start of the transaction.
	for _, c := range []*changelog.Change{event(1), event(2), end} {
		if err := l.check(ctx, c, true); err != nil {
			t.Fatalf("offset %d after the partition was given up and read again: %v", c.Pos.Offset, err)
		}
	}
}
