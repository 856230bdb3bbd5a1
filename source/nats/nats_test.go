package nats_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/internal/pipelinetest"
	"github.com/txsink/txsink/internal/testdb"
	_ "github.com/txsink/txsink/sink/sinks" // the command links the sinks in; these tests do as it does
	natssource "github.com/txsink/txsink/source/nats"
)

// targetTables are inventory's tables in each target dialect.
var targetTables = map[string][]string{
	"sqlite": {
		`CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT NOT NULL, total BIGINT NOT NULL)`,
		`CREATE TABLE items (order_id INTEGER NOT NULL, n INTEGER NOT NULL, amount BIGINT NOT NULL, PRIMARY KEY (order_id, n))`,
		`CREATE TABLE events (order_id INTEGER NOT NULL, kind TEXT NOT NULL)`,
	},
	"mysql": {
		`CREATE TABLE orders (id INT PRIMARY KEY, customer VARCHAR(40) NOT NULL, total BIGINT NOT NULL)`,
		`CREATE TABLE items (order_id INT NOT NULL, n INT NOT NULL, amount BIGINT NOT NULL, PRIMARY KEY (order_id, n))`,
		`CREATE TABLE events (order_id INT NOT NULL, kind VARCHAR(20) NOT NULL)`,
	},
	"postgres": {
		`CREATE TABLE orders (id int PRIMARY KEY, customer text NOT NULL, total bigint NOT NULL)`,
		`CREATE TABLE items (order_id int NOT NULL, n int NOT NULL, amount bigint NOT NULL, PRIMARY KEY (order_id, n))`,
		`CREATE TABLE events (order_id int NOT NULL, kind text NOT NULL)`,
	},
}

// partial counts the orders whose items do not sum to their total, which
// only a partial transaction leaves in the target.
const partial = `SELECT count(*) FROM orders o WHERE o.total <> (SELECT coalesce(sum(amount), 0) FROM items i WHERE i.order_id = o.id)`

// stream is a JetStream stream of the test's own, deleted when it ends.
type stream struct {
	url, name, prefix string
	js                jetstream.JetStream
	storage           jetstream.StorageType
}

// newStream creates a stream with a unique name and subjects <prefix>.>,
// as Debezium Server's create-stream does.
func newStream(t testing.TB) *stream {
	t.Helper()
	return newStreamOn(t, testdb.NATS(t), jetstream.MemoryStorage)
}

// newStreamOn creates such a stream on the server at url, stored there.
func newStreamOn(t testing.TB, url string, storage jetstream.StorageType) *stream {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatalf("connect to NATS at %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("%d_%06d", time.Now().UnixNano()%1e9, rand.IntN(1e6))
	s := &stream{url: url, name: "TXSINK_T_" + id, prefix: "t" + id, js: js, storage: storage}
	s.create(t)
	return s
}

// create creates the stream (again).
func (s *stream) create(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.js.CreateStream(ctx, jetstream.StreamConfig{Name: s.name, Subjects: []string{s.prefix + ".>"}, Storage: s.storage}); err != nil {
		t.Fatalf("create stream %s: %v", s.name, err)
	}
	t.Cleanup(func() {
		if err := s.js.DeleteStream(context.Background(), s.name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			t.Errorf("delete stream %s: %v", s.name, err)
		}
	})
}

// publish publishes msgs in order, each acknowledged by the stream.
func (s *stream) publish(t testing.TB, msgs ...msg) {
	t.Helper()
	for _, m := range msgs {
		if _, err := s.js.Publish(context.Background(), m.subject, m.data); err != nil {
			t.Fatalf("publish to %s: %v", m.subject, err)
		}
	}
}

// pipeline returns the pipeline reading s into dst in transaction mode.
func pipeline(name string, s *stream, dst *testdb.DB) *config.Config {
	cfg := config.Default()
	cfg.Name = name
	cfg.Source = config.Source{Type: natssource.Type, Format: "debezium-json"}
	cfg.Source.Set("url", s.url)
	cfg.Source.Set("stream", s.name)
	cfg.Target.URL = dst.URL
	cfg.Tables = []config.Table{{Source: "inventory.events", AppendOnly: true}, {Source: "inventory.*"}}
	cfg.Sink.TxnEnabled = true
	return &cfg
}

// dumpTarget renders the target's tables as model.dump renders the model.
func dumpTarget(t testing.TB, db *testdb.DB) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		"SELECT id, customer, total FROM orders ORDER BY id",
		"SELECT order_id, n, amount FROM items ORDER BY order_id, n",
		"SELECT order_id, kind, count(*) FROM events GROUP BY order_id, kind ORDER BY order_id, kind",
	} {
		rows, err := db.SQL.Query(q)
		if err != nil {
			t.Fatalf("%s: %s: %v", db.Dialect, q, err)
		}
		for rows.Next() {
			var a, c int64
			var s string
			if err := rows.Scan(&a, &s, &c); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%d|%s|%d\n", a, s, c)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		b.WriteString("--\n")
	}
	return b.String()
}

// caughtUp waits until the target shows want, checking on every look that
// no partial transaction is visible.
func caughtUp(t testing.TB, r *pipelinetest.Run, dst *testdb.DB, want string) {
	t.Helper()
	r.Until(t, 2*time.Minute, "the target caught up", func() (bool, string) {
		noPartial(t, dst)
		got := dumpTarget(t, dst)
		return got == want, "want\n" + want + "got\n" + got
	})
}

// noPartial fails the test if the target shows part of a source
// transaction.
func noPartial(t testing.TB, dst *testdb.DB) {
	t.Helper()
	var n int
	if err := dst.SQL.QueryRow(partial).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d orders in the target do not match their items: a source transaction was applied in part", n)
	}
}

// progress returns the target's stored position of the stream (0 with
// none yet).
func progress(t testing.TB, dst *testdb.DB, s *stream) int64 {
	t.Helper()
	var n int64
	q := "SELECT position FROM txsink_progress WHERE source_partition = '" + natssource.Partition(s.name) + "'"
	if err := dst.SQL.QueryRow(q).Scan(&n); err != nil && err != sql.ErrNoRows {
		if strings.Contains(err.Error(), "txsink_progress") {
			return 0 // not created yet
		}
		t.Fatal(err)
	}
	return n
}

// waitProgress waits until the target committed a position of at least
// min.
func waitProgress(t testing.TB, dst *testdb.DB, s *stream, min int64) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for progress(t, dst, s) < min {
		if time.Now().After(deadline) {
			t.Fatalf("the target did not commit position %d of stream %s within a minute (at %d)", min, s.name, progress(t, dst, s))
		}
		<-tick.C
	}
}

// TestStream reads Debezium Server's messages, one subject per table and
// the transaction subject, from a stream into each target, stopping the
// pipeline mid-stream and starting it again while messages keep coming:
// the target ends as the source, row for row (a message applied twice
// would duplicate an event, a lost one leave a row behind), never shows
// part of a transaction, and holds the last message's sequence + 1.
func TestStream(t *testing.T) {
	for _, dialect := range testdb.Dialects {
		t.Run(dialect, func(t *testing.T) {
			s := newStream(t)
			dst := testdb.Open(t, dialect)
			dst.Exec(t, targetTables[dialect]...)
			cfg := pipeline("nats_stream_"+dialect, s, dst)
			m := newModel(s.prefix, 1)
			published := int64(0)
			pub := func(from, to int) {
				for i := from; i < to; i++ {
					msgs := m.next(i)
					s.publish(t, msgs...)
					published += int64(len(msgs))
				}
			}
			pub(0, 100) // waiting before the first run
			r := pipelinetest.Start(t, cfg)
			pub(100, 200)
			// Stopped mid-stream: what was committed stays, the rest is
			// read again by the next run, from the target's position.
			waitProgress(t, dst, s, 2)
			r.Stop(t)
			if p := progress(t, dst, s); p > published+1 {
				t.Fatalf("the target holds position %d, past the %d messages published", p, published)
			}
			pub(200, 300) // published while txsink is stopped
			r = pipelinetest.Start(t, cfg)
			pub(300, 400)
			caughtUp(t, r, dst, m.dump())
			// The lag is txsink's to tell (nothing is acknowledged): the
			// stream's end as the reader saw it, in records (messages).
			// The engine records a commit in its status after the
			// target's COMMIT returns, so the rows can be visible a
			// moment before the status says so: wait for it.
			end := published + 1
			r.Until(t, time.Minute, "the status shows no lag", func() (bool, string) {
				for _, ps := range r.Engine().Status().Partitions {
					if ps.Name != natssource.Partition(s.name) {
						continue
					}
					if ps.Unit != "records" || ps.End != end || ps.Committed != end {
						return false, fmt.Sprintf("status of %s: %s, end %d, committed %d; want records, %d, %d (no lag)", ps.Name, ps.Unit, ps.End, ps.Committed, end, end)
					}
					return true, ""
				}
				return false, "no status of partition " + natssource.Partition(s.name)
			})
			r.Stop(t)
			if p := progress(t, dst, s); p != published+1 {
				t.Errorf("the target holds position %d, want the last sequence + 1, %d", p, published+1)
			}
			// A run with nothing new applies nothing twice.
			r = pipelinetest.Start(t, cfg)
			caughtUp(t, r, dst, m.dump())
			r.Stop(t)
		})
	}
}

// sqliteFixture returns a stream of the test's own, a SQLite target with
// inventory's tables, the pipeline named name between them, and the model
// of the source, whose first n transactions are published.
func sqliteFixture(t testing.TB, name string, seed uint64, n int) (*stream, *testdb.DB, *config.Config, *model) {
	t.Helper()
	s := newStream(t)
	dst := testdb.SQLite(t)
	dst.Exec(t, targetTables["sqlite"]...)
	m := newModel(s.prefix, seed)
	for i := range n {
		s.publish(t, m.next(i)...)
	}
	return s, dst, pipeline(name, s, dst), m
}

// TestDebeziumRestartDuplicates publishes messages again, as Debezium
// Server does after its own restart (it sets no message id, so the stream
// keeps both): the copies are new messages at new sequences. Transaction
// mode drops the copies of events it read before, by their place in the
// source's binlog and by Debezium's transaction metadata (the
// transaction's id and each event's total_order): whole transactions, a
// transaction's first events again before its END, and its last events
// and END again after it. After a restart of txsink too: the places
// committed are stored with the position, so inventory.events, which has
// no key, does not get the rows again (TestCopiesAfterRestart tries more).
// No partial transaction shows on the way.
func TestDebeziumRestartDuplicates(t *testing.T) {
	// long returns the first of transactions 20 to 39 with at least three
	// row events.
	long := func(t *testing.T, m *model) int {
		for k := 20; k < 40; k++ {
			if len(m.txns[k]) >= 5 {
				return k
			}
		}
		t.Fatal("no transaction with three row events")
		return 0
	}
	for _, tc := range []struct {
		name string
		// publish publishes transactions 0 to 39 of m, with copies; it
		// may stop and start txsink (stop, start).
		publish func(t *testing.T, s *stream, m *model, stop, start func())
	}{{
		name: "whole, while running",
		publish: func(t *testing.T, s *stream, m *model, _, _ func()) {
			s.publish(t, m.replay(0, 40, false)...)
			s.publish(t, m.replay(20, 40, false)...)
		},
	}, {
		name: "whole, while stopped",
		publish: func(t *testing.T, s *stream, m *model, stop, start func()) {
			s.publish(t, m.replay(0, 40, false)...)
			stop()
			s.publish(t, m.replay(20, 40, false)...)
			start()
		},
	}, {
		name: "in part, before its end",
		publish: func(t *testing.T, s *stream, m *model, _, _ func()) {
			k := long(t, m)
			s.publish(t, m.replay(0, k, false)...)
			s.publish(t, m.txns[k][:3]...) // BEGIN and two events
			s.publish(t, m.txns[k][1:]...) // from the first event again, to END
			s.publish(t, m.replay(k+1, 40, false)...)
		},
	}, {
		name: "in part, after its end",
		publish: func(t *testing.T, s *stream, m *model, _, _ func()) {
			k := long(t, m)
			s.publish(t, m.replay(0, k+1, false)...)
			s.publish(t, m.txns[k][2:]...) // from the second event again, and END
			s.publish(t, m.replay(k+1, 40, false)...)
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s, dst, cfg, m := sqliteFixture(t, "nats_dups", 3, 0)
			for i := range 40 {
				m.next(i)
			}
			r := pipelinetest.Start(t, cfg)
			tc.publish(t, s, m, func() {
				caughtUp(t, r, dst, m.dump())
				r.Stop(t)
			}, func() { r = pipelinetest.Start(t, cfg) })
			for i := 40; i < 60; i++ {
				s.publish(t, m.next(i)...)
			}
			caughtUp(t, r, dst, m.dump())
		})
	}
}

// TestBadRecord stops at a message that cannot be decoded with an error
// naming its subject and stream sequence; nothing at or after it is
// committed.
func TestBadRecord(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"malformed JSON", `{"op": "c", "after": {"id": 1,`, "JSON"},
		{"unknown op", `{"op": "x", "after": {"id": 1}, "source": {"db": "inventory", "table": "orders"}}`, `"x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStream(t)
			dst := testdb.SQLite(t)
			dst.Exec(t, targetTables["sqlite"]...)
			m := newModel(s.prefix, 5)
			var seq int64
			for i := range 10 {
				msgs := m.next(i)
				s.publish(t, msgs...)
				seq += int64(len(msgs))
			}
			subject := s.prefix + ".inventory.orders"
			s.publish(t, msg{subject, []byte(tc.data)})
			seq++
			s.publish(t, m.next(10)...) // after it: never applied
			err := pipelinetest.Start(t, pipeline("nats_bad", s, dst)).Wait()
			where := fmt.Sprintf("%s:%d", subject, seq)
			if err == nil || !strings.Contains(err.Error(), where) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run = %v, want an error naming %s and %s", err, where, tc.want)
			}
			t.Logf("Run: %v", err)
			// What the run committed before it stopped (the engine commits
			// what it held back for a busy target, not more) is whole
			// transactions, before the bad message.
			var n int
			if err := dst.SQL.QueryRow(partial).Scan(&n); err != nil || n != 0 {
				t.Errorf("%d orders do not match their items (%v): a partial transaction was committed", n, err)
			}
			if p := progress(t, dst, s); p > seq {
				t.Errorf("the target holds position %d, past the bad message's sequence %d", p, seq)
			}
		})
	}
}

// TestResumeRefused refuses a stored position the stream cannot resume
// from, saying why and what to do: a stream deleted and created again
// under the same name, and a stream whose limits or a purge removed
// messages the target has not applied.
func TestResumeRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, s *stream, m *model)
		want   string
	}{{
		name: "recreated",
		change: func(t *testing.T, s *stream, m *model) {
			if err := s.js.DeleteStream(context.Background(), s.name); err != nil {
				t.Fatal(err)
			}
			s.create(t)
			for i := range 10 {
				s.publish(t, m.next(i)...)
			}
		},
		want: "deleted and created again",
	}, {
		name: "purged",
		change: func(t *testing.T, s *stream, m *model) {
			for i := 5; i < 8; i++ {
				s.publish(t, m.next(i)...)
			}
			st, err := s.js.Stream(context.Background(), s.name)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Purge(context.Background()); err != nil {
				t.Fatal(err)
			}
		},
		want: "no longer holds messages",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s, dst, cfg, m := sqliteFixture(t, "nats_refused", 7, 5)
			r := pipelinetest.Start(t, cfg)
			caughtUp(t, r, dst, m.dump())
			r.Stop(t)
			tc.change(t, s, m)
			err := pipelinetest.Start(t, cfg).Wait()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "txsink reset") {
				t.Fatalf("Run = %v, want the refusal saying %q and how to forget the position", err, tc.want)
			}
			t.Logf("Run: %v", err)
		})
	}
}

// TestServerRestart kills the NATS server (a private one, with its
// streams on disk) while the pipeline reads, and starts it again: the
// source reconnects and reads on after the last message it had read, and
// the target ends exact, every message applied once.
func TestServerRestart(t *testing.T) {
	srv := testdb.PrivateNATS(t)
	s := newStreamOn(t, srv.URL, jetstream.FileStorage)
	dst := testdb.SQLite(t)
	dst.Exec(t, targetTables["sqlite"]...)
	m := newModel(s.prefix, 19)
	for i := range 100 {
		s.publish(t, m.next(i)...)
	}
	r := pipelinetest.Start(t, pipeline("nats_restart", s, dst))
	waitProgress(t, dst, s, 2)
	srv.Kill()
	srv.Start()
	for i := 100; i < 200; i++ {
		s.publish(t, m.next(i)...)
	}
	caughtUp(t, r, dst, m.dump())
}
