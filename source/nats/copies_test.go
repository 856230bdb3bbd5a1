package nats_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/internal/pipelinetest"
	"github.com/txsink/txsink/internal/testdb"
)

// TestCopiesAfterRestart is Debezium Server restarting after txsink
// committed what it had published: run 1 commits transactions 0 to 39
// and stops; Debezium Server publishes transactions 20 to 30 again (new
// messages at new stream sequences, the same payloads), among them older
// images of rows that transactions 31 to 39 changed again, and inserts
// into inventory.events, which has no key. Run 2 resumes from the
// target's position: it drops every copy by its place in the source's
// log (stored with the position in run 1's units) and counts it, and the
// target stays the source's after transaction 39, row for row (an older
// image applied would move a row back, an insert applied again would add
// an event); then new transactions are applied. In transaction mode and
// in plain mode, with and without Debezium's transaction metadata, for
// the MySQL and the PostgreSQL connector's source blocks (and MySQL's
// compressed transaction payloads, whose events share a position: none of
// them is taken for a copy of another), into SQLite, MariaDB and
// PostgreSQL.
func TestCopiesAfterRestart(t *testing.T) {
	for _, tc := range []struct {
		name, dialect  string
		txn            bool
		bare, postgres bool
		compressed     bool
		seed           uint64
	}{
		{name: "sqlite, transaction mode, mysql", dialect: "sqlite", txn: true, seed: 3},
		{name: "sqlite, plain, mysql without transaction metadata", dialect: "sqlite", bare: true, seed: 3},
		{name: "sqlite, plain, mysql compressed payloads without transaction metadata", dialect: "sqlite", bare: true, compressed: true, seed: 3},
		{name: "sqlite, transaction mode, mysql compressed payloads", dialect: "sqlite", txn: true, compressed: true, seed: 3},
		{name: "sqlite, transaction mode, postgresql", dialect: "sqlite", txn: true, postgres: true, seed: 3},
		{name: "mariadb, transaction mode, mysql", dialect: "mysql", txn: true, seed: 3},
		{name: "postgres, plain, postgresql", dialect: "postgres", postgres: true, seed: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStream(t)
			dst := testdb.Open(t, tc.dialect)
			dst.Exec(t, targetTables[tc.dialect]...)
			cfg := pipeline("nats_copies", s, dst)
			cfg.Sink.TxnEnabled = tc.txn
			m := newModel(s.prefix, tc.seed)
			m.bare, m.postgres, m.compressed = tc.bare, tc.postgres, tc.compressed
			for i := range 40 {
				s.publish(t, m.next(i)...)
			}
			r := pipelinetest.Start(t, cfg)
			settled(t, r, dst, m.dump(), tc.txn, -1)
			r.Stop(t)

			copies := m.replay(20, 31, false)
			if !movesBack(t, m, 20, 31, 40) {
				t.Fatalf("seed %d: no copy of transactions 20 to 30 holds an older image of a row 31 to 39 change", tc.seed)
			}
			s.publish(t, copies...)
			rows := 0
			for _, c := range copies {
				if !strings.HasSuffix(c.subject, ".transaction") {
					rows++
				}
			}
			r = pipelinetest.Start(t, cfg)
			// Every copy read and dropped, the target as it was.
			settled(t, r, dst, m.dump(), tc.txn, int64(rows))
			for i := 40; i < 60; i++ {
				s.publish(t, m.next(i)...)
			}
			settled(t, r, dst, m.dump(), tc.txn, int64(rows))
			r.Stop(t)
		})
	}
}

// settled waits until the target shows want and, unless copies is -1,
// the run counted copies copies dropped. In transaction mode no look may
// show a partial transaction; in plain mode units are cut anywhere.
func settled(t *testing.T, r *pipelinetest.Run, dst *testdb.DB, want string, txn bool, copies int64) {
	t.Helper()
	r.Until(t, 2*time.Minute, "the target caught up", func() (bool, string) {
		if txn {
			noPartial(t, dst)
		}
		got := dumpTarget(t, dst)
		st := r.Engine().Stats()
		if copies >= 0 && st.Copies != copies {
			return false, fmt.Sprintf("%d copies dropped, want %d; target:\n%s", st.Copies, copies, got)
		}
		return got == want, "want\n" + want + "got\n" + got
	})
}

// movesBack reports whether one of transactions from to to of m writes a
// row of orders or items that one of transactions to to later writes
// again: its copy, applied after the later one, would move the row back.
func movesBack(t *testing.T, m *model, from, to, later int) bool {
	t.Helper()
	keys := func(a, b int) map[string]bool {
		out := map[string]bool{}
		for _, txn := range m.txns[a:b] {
			for _, msg := range txn {
				var ev struct {
					Before, After map[string]any
					Source        struct{ Table string }
				}
				if err := json.Unmarshal(msg.data, &ev); err != nil || ev.Source.Table == "" || ev.Source.Table == "events" {
					continue
				}
				img := ev.After
				if img == nil {
					img = ev.Before
				}
				out[fmt.Sprint(ev.Source.Table, img["id"], img["order_id"], img["n"])] = true
			}
		}
		return out
	}
	again := keys(to, later)
	for k := range keys(from, to) {
		if again[k] {
			return true
		}
	}
	return false
}

// TestLogStartsAgain is the source's log numbered anew after run 1 (RESET
// MASTER, a restored database) with a new snapshot, as Debezium takes one
// once its offsets are reset: the snapshot starts the connector's logs
// again, so the events after it, whose places are below those stored, are
// applied, none dropped.
func TestLogStartsAgain(t *testing.T) {
	s, dst, cfg, m := sqliteFixture(t, "nats_restart", 3, 40)
	r := pipelinetest.Start(t, cfg)
	settled(t, r, dst, m.dump(), true, -1)
	r.Stop(t)

	var id int64 = -1
	for k := range m.orders {
		id = max(id, k)
	}
	if id < 0 {
		t.Fatal("the model has no order to snapshot")
	}
	o := m.orders[id]
	s.publish(t, msg{s.prefix + ".inventory.orders", mustJSON(map[string]any{
		"before": nil, "after": map[string]any{"id": id, "customer": o.customer, "total": o.total}, "op": "r", "ts_ms": 1767225600000,
		"source": map[string]any{"version": "2.7.3.Final", "connector": "mysql", "name": s.prefix, "snapshot": "true", "db": "inventory",
			"table": "orders", "server_id": 0, "file": "mysql-bin.000001", "pos": 157, "row": 0},
		"transaction": nil})})
	m.pos = 0 // the binlog starts again
	for i := 40; i < 60; i++ {
		s.publish(t, m.next(i)...)
	}
	r = pipelinetest.Start(t, cfg)
	settled(t, r, dst, m.dump(), true, 0)
	r.Stop(t)
}
