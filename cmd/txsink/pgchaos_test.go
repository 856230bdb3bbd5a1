//go:build unix

package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
	"github.com/txsink/txsink/sink/sinktest"
	"github.com/txsink/txsink/source/postgres"
)

// TestChaosPostgresSource runs the real txsink binary from a PostgreSQL
// source (logical replication, snapshot: initial in small chunks) into
// each real target (SQLite, MariaDB, PostgreSQL) while 3 writers, each on
// a connection of its own, run multi-table transactions on the source the
// whole time — inserts, updates, deletes and key moves of orders and
// their items, and an append-only event per transaction — and SIGKILLs it
// at random moments, restarting it after every kill: the first kill lands
// during the initial copy (after a random few of its chunk commits plus a
// random few milliseconds), the last two while it streams (the copy and
// its windows behind it, a random few commits more plus a random few
// milliseconds), any between after a random count of commits, whatever the
// run is doing then. Checked:
//
//   - a reader polls workload.Invariant on the target for the whole run,
//     from the first commit, with the stored mark in the same statement:
//     once the mark is cleared (the copy done and the stream past its
//     windows) it never sees a source transaction half applied (every
//     source transaction keeps each order's amount the sum of its items);
//     before, the target is not promised to be consistent
//     (docs/postgres-snapshot.md) and the violations are counted apart;
//   - the first kill came during the copy; after every kill the target's
//     stored position never goes back, and while streaming the slot never
//     confirmed more than it holds;
//   - at the end (writers stopped, the last run caught up, then stopped by
//     SIGTERM with exit 0), the target equals the source row for row, and
//     order_events, append-only without a key, holds each event as many
//     times as the source: a transaction copied and streamed, or replayed
//     after a kill, would show as a duplicate.
//
// The figures are logged per target. Environment (as TestChaos):
// TXSINK_CHAOS_KILLS (default and at least 3), TXSINK_CHAOS_SEED (the
// seed of the writers and the kill schedule; logged; the writers'
// interleaving and the runs' timing still vary), TXSINK_CHAOS_DIALECTS.
func TestChaosPostgresSource(t *testing.T) {
	txsinkBinary(t) // build (or skip) before the servers are set up
	kills := max(3, chaosEnvInt(t, "TXSINK_CHAOS_KILLS", 3))
	seed := chaosSeed(t)
	dialects := chaosDialects()
	t.Logf("postgres chaos: %d kills per target (1 during the copy), seed %d (TXSINK_CHAOS_SEED=%d reproduces the schedule)", kills, seed, seed)
	src := testdb.PrivatePostgres(t)
	src.Exec(t, pgChaosSourceSchema...)
	for i, d := range dialects {
		t.Run(d, func(t *testing.T) {
			dst := testdb.Open(t, d)
			dst.Exec(t, workload.Schema(dst.Dialect)...)
			r := pgChaosRun(t, src, dst, "pgchaos_"+d, kills, seed+uint64(i))
			t.Log(r)
		})
	}
}

// pgChaosSourceSchema is workload.Schema's tables on the source, but
// order_events has no key: a row delivered twice stays twice.
var pgChaosSourceSchema = []string{
	`CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, customer VARCHAR(64) NOT NULL, status VARCHAR(16) NOT NULL,
		amount DECIMAL(12,2) NOT NULL, created_at TIMESTAMP(3) NOT NULL, note VARCHAR(200) NULL)`,
	`CREATE TABLE order_items (order_id BIGINT NOT NULL, line_no INT NOT NULL, sku VARCHAR(32) NOT NULL, qty INT NOT NULL,
		price DECIMAL(10,2) NOT NULL, PRIMARY KEY (order_id, line_no))`,
	`CREATE TABLE order_events (order_id BIGINT NOT NULL, event VARCHAR(16) NOT NULL)`,
}

// pgChaosCompared are the queries whose results must agree between the
// source and the target, row for row (sinktest.Rows normalizes them).
var pgChaosCompared = []string{
	"SELECT id, customer, status, amount, created_at, note FROM orders ORDER BY id",
	"SELECT order_id, line_no, sku, qty, price FROM order_items ORDER BY order_id, line_no",
	"SELECT order_id, event, COUNT(*) FROM order_events GROUP BY order_id, event ORDER BY order_id, event",
}

// Sizes of the postgres chaos run: the initial copy is pgChaosOrders
// orders (about twice as many items, and one event each) copied in chunks
// of pgChaosChunkRows, so that it takes many chunk commits; writers own
// the ids congruent to their number modulo pgChaosWriterCount, in a space a
// fifth larger than the initial orders, so inserts find free ids.
const (
	pgChaosOrders      = 3000
	pgChaosChunkRows   = 100
	pgChaosWriterCount = 3
	pgChaosDeadline    = 2 * time.Minute // until a wait's condition holds
)

// pgChaosReport holds one target's figures.
type pgChaosReport struct {
	dialect        string
	kills          int
	copyKills      int   // of them, during the initial copy
	windowKills    int   // after the copy, before the stream passed its windows
	restarts       int   // runs started after a kill
	commits        int   // commits the runs logged
	txns           int64 // source transactions the writers committed
	orders, items  int   // rows at the end
	events         int   // order_events rows at the end
	polls, partial int64 // the reader's polls and invariant violations seen once the target is consistent
	// earlyPolls and earlyPartial are the same before: during the copy
	// and until the stream passed its windows, where the invariant is
	// not promised (docs/postgres-snapshot.md).
	earlyPolls, earlyPartial int64
	dur                      time.Duration
}

func (r pgChaosReport) String() string {
	return fmt.Sprintf("postgres chaos %s: %d kills (%d during the copy, %d inside its windows), %d restarts, %d commits of %d source transactions written during the run; "+
		"final %d orders, %d items, %d events equal to the source; reader: %d polls, %d partial source transactions seen "+
		"(before the copy was consistent, where none is promised: %d polls, %d violations); %s",
		r.dialect, r.kills, r.copyKills, r.windowKills, r.restarts, r.commits, r.txns, r.orders, r.items, r.events, r.polls, r.partial,
		r.earlyPolls, r.earlyPartial, r.dur.Round(time.Millisecond))
}

// pgChaosRun fills the source with the initial orders, starts the writers
// and the reader, and kills and restarts txsink runs of the pipeline name
// from src into dst (whose tables exist) as TestChaosPostgresSource says.
func pgChaosRun(t *testing.T, src, dst *testdb.DB, name string, kills int, seed uint64) pgChaosReport {
	began := time.Now()
	slot := postgres.DefaultSlot(name)
	src.Exec(t, "TRUNCATE orders, order_items, order_events")
	t.Cleanup(func() { src.SQL.Exec("SELECT pg_drop_replication_slot($1)", slot) })
	src.Exec(t, fmt.Sprintf(`INSERT INTO order_items SELECT o, l, 'sku' || l, 1 + (o * 7 + l) %% 5, (100 + (o * 13 + l * 31) %% 9000) / 100.0
		FROM generate_series(0, %d) o, generate_series(0, 2) l WHERE l <= o %% 3`, pgChaosOrders-1),
		fmt.Sprintf(`INSERT INTO orders SELECT g, 'customer ' || g, 'NEW', (SELECT SUM(qty * price) FROM order_items WHERE order_id = g),
		timestamp '2026-01-02 03:04:05.123' + g * interval '1 second', CASE WHEN g %% 4 = 0 THEN 'note ' || g END FROM generate_series(0, %d) g`, pgChaosOrders-1),
		fmt.Sprintf(`INSERT INTO order_events SELECT g, 'created' FROM generate_series(0, %d) g`, pgChaosOrders-1))
	cfg := writePgChaosConfig(t, name, src.URL, dst.URL)
	rep := pgChaosReport{dialect: dst.Dialect}
	rng := rand.New(rand.NewPCG(seed, 29))

	w := startPgChaosWriters(t, src, pgChaosWriterCount, seed)
	var reader *invariantReader
	lastPos := int64(0)
	for k := 1; k <= kills; k++ {
		p := start(t, "run", "--config", cfg, "--log-level", "debug", "--http", "off")
		if k > 1 {
			rep.restarts++
		}
		// The first kill is aimed during the copy, the last two while
		// streaming, any between at a random count of commits, whatever
		// the run is doing then (the copy, its windows, the stream).
		aimCopy, aimStream := k == 1, k > kills-2
		base, most := 0, 8
		if !aimCopy && !aimStream {
			most = 60
		}
		if aimStream {
			// The copy, and the windows of changes it overlapped, are
			// behind: the run streams.
			waitPgChaos(t, p, "the copy ends and the stream passes its windows", func() bool {
				m, _ := pgChaosProgress(t, dst, name)
				return !m.Valid
			})
			// And the reader sees it streaming, at least once a run.
			polls := reader.polls.Load()
			waitPgChaos(t, p, "the reader polls the streaming target", func() bool { return reader.polls.Load() > polls })
			base = p.Commits()
		}
		n := base + 1 + rng.IntN(most)
		jitter := time.Duration(rng.IntN(20)) * time.Millisecond
		if reader == nil {
			// From the first commit on (the progress table exists), the
			// reader polls until the end.
			p.waitCommits(1)
			reader = startReader(t, dst, pgChaosInvariant(name), true)
		}
		p.waitCommits(n)
		if jitter > 0 {
			// Not a wait for anything: it moves the kill to a random
			// point of the run's work.
			timer := time.NewTimer(jitter)
			select {
			case <-timer.C:
			case <-p.done:
			}
			timer.Stop()
		}
		p.kill(k)
		rep.kills++
		rep.commits += p.Commits()
		m, pos := pgChaosProgress(t, dst, name)
		phase := "streaming"
		switch {
		case m.Valid && !pgSnapDone(m.String):
			phase = "during the copy"
			rep.copyKills++
		case m.Valid:
			phase = "after the copy, inside its windows"
			rep.windowKills++
		}
		if aimCopy && phase != "during the copy" {
			t.Fatalf("kill %d: aimed during the copy, it came after it (the stored mark is %q): raise pgChaosOrders", k, m.String)
		}
		if !m.Valid {
			// The slot's confirmed position, read after the kill, is
			// never beyond what the target committed.
			var confirmed int64
			if err := src.SQL.QueryRow("SELECT confirmed_flush_lsn - '0/0' FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&confirmed); err != nil {
				t.Fatalf("kill %d: read the slot: %v", k, err)
			}
			if confirmed > pos {
				t.Errorf("kill %d: the slot confirmed %d, beyond the target's committed position %d", k, confirmed, pos)
			}
		}
		if pos < lastPos {
			t.Errorf("kill %d: the stored position went back from %d to %d", k, lastPos, pos)
		}
		lastPos = pos
		t.Logf("kill %d after %d logged commits (+%s), %s; stored position %d", k, p.Commits(), jitter, phase, pos)
		if t.Failed() {
			t.Fatalf("stopped after kill %d; the reader so far: %d polls, %d invariant violations (and %d polls, %d violations before the copy was consistent)",
				k, reader.polls.Load(), reader.violations.Load(), reader.early.polls.Load(), reader.early.violations.Load())
		}
	}

	// The last run: the writers stop while it streams, it catches up, and
	// SIGTERM stops it.
	p := start(t, "run", "--config", cfg, "--log-level", "debug", "--http", "off")
	rep.restarts++
	waitPgChaos(t, p, "the stream passes the copy's windows", func() bool {
		m, _ := pgChaosProgress(t, dst, name)
		return !m.Valid
	})
	polls := reader.polls.Load()
	waitPgChaos(t, p, "the reader polls the streaming target", func() bool { return reader.polls.Load() > polls })
	rep.txns = w.finish(t)
	want := pgChaosDump(t, src)
	wantEvents := count(t, src, "order_events")
	var got string
	waitPgChaosOr(t, p, "the target equals the source", func() bool {
		if n := count(t, dst, "order_events"); n > wantEvents {
			t.Fatalf("the target has %d order_events rows, the source %d: a transaction was applied twice\n%s", n, wantEvents, lineDiff(want, pgChaosDump(t, dst)))
		}
		got = pgChaosDump(t, dst)
		return got == want
	}, func() string {
		return fmt.Sprintf("the reader: %d polls, %d invariant violations (before the copy was consistent: %d polls, %d violations)\n%s",
			reader.polls.Load(), reader.violations.Load(), reader.early.polls.Load(), reader.early.violations.Load(), lineDiff(want, got))
	})
	p.signal(syscall.SIGTERM)
	if code := p.wait(); code != 0 {
		t.Fatalf("the last txsink run exited %d (%v) after SIGTERM, want 0\nstderr:\n%s", code, p.cmd.ProcessState, tail(p.Stderr()))
	}
	rep.commits += p.Commits()
	rep.polls, rep.partial = reader.finish(t)
	rep.earlyPolls, rep.earlyPartial = reader.early.polls.Load(), reader.early.violations.Load()
	rep.orders, rep.items, rep.events = count(t, dst, "orders"), count(t, dst, "order_items"), count(t, dst, "order_events")
	rep.dur = time.Since(began)
	if rep.partial != 0 {
		t.Errorf("the reader saw %d invariant violations in %d polls: source transactions applied in parts", rep.partial, rep.polls)
	}
	if rep.polls < 3 {
		t.Errorf("the reader polled the consistent target only %d times over at least 3 streaming runs: too little overlap to mean anything", rep.polls)
	}
	return rep
}

// pgSnapDone reports whether a stored "pgsnap1 " mark says every
// table's copy is done.
func pgSnapDone(mark string) bool {
	var st struct {
		Tables map[string]struct{ Done bool }
	}
	rest, ok := strings.CutPrefix(mark, "pgsnap1 ")
	if !ok || json.Unmarshal([]byte(rest), &st) != nil {
		return false
	}
	for _, tb := range st.Tables {
		if !tb.Done {
			return false
		}
	}
	return len(st.Tables) > 0
}

// pgChaosInvariant is the phased reader's query (see invariantReader):
// workload.Invariant's violations, and whether the pipeline's stored mark
// is cleared — the copy done and the stream past its windows, from when
// the target is transactionally consistent with the source. One
// statement reads both in one snapshot.
func pgChaosInvariant(pipeline string) string {
	return "SELECT (" + workload.Invariant + "), (SELECT COUNT(*) FROM txsink_progress WHERE pipeline = '" + pipeline + "' AND position_mark IS NULL)"
}

// lineDiff describes how got's lines differ from want's, as multisets:
// up to 20 lines each, of those only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	n := map[string]int{}
	for _, l := range strings.Split(want, "\n") {
		n[l]++
	}
	for _, l := range strings.Split(got, "\n") {
		n[l]--
	}
	var minus, plus []string
	for l, c := range n {
		for ; c > 0 && len(minus) < 20; c-- {
			minus = append(minus, "- "+l)
		}
		for ; c < 0 && len(plus) < 20; c++ {
			plus = append(plus, "+ "+l)
		}
	}
	slices.Sort(minus)
	slices.Sort(plus)
	return "source only (-), target only (+):\n" + strings.Join(append(minus, plus...), "\n")
}

// pgChaosDump renders the compared queries' results on db.
func pgChaosDump(t *testing.T, db *testdb.DB) string {
	t.Helper()
	var b strings.Builder
	for _, q := range pgChaosCompared {
		b.WriteString(sinktest.Rows(t, db.SQL, q))
		b.WriteString("\n--\n")
	}
	return b.String()
}

// pgChaosProgress reads the pipeline's stored position and mark (the
// copy's progress while it is not done, NULL after); none yet reads as
// position 0 and no mark.
func pgChaosProgress(t *testing.T, dst *testdb.DB, pipeline string) (sql.NullString, int64) {
	t.Helper()
	var m sql.NullString
	var pos int64
	if !tableExists(t, dst, "txsink_progress") {
		return m, 0
	}
	err := dst.SQL.QueryRow("SELECT position_mark, position FROM txsink_progress WHERE pipeline = '"+pipeline+"'").Scan(&m, &pos)
	if err != nil && err != sql.ErrNoRows {
		t.Fatalf("read the progress: %v", err)
	}
	return m, pos
}

// waitPgChaos waits until cond holds, reading it every chaosPollEvery;
// it fails the test if the run exits or pgChaosDeadline passes first.
func waitPgChaos(t *testing.T, p *proc, what string, cond func() bool) {
	t.Helper()
	waitPgChaosOr(t, p, what, cond, func() string { return "" })
}

// waitPgChaosOr is waitPgChaos whose failure also says why(), the state
// that kept cond false.
func waitPgChaosOr(t *testing.T, p *proc, what string, cond func() bool, why func() string) {
	t.Helper()
	deadline := time.NewTimer(pgChaosDeadline)
	defer deadline.Stop()
	tick := time.NewTicker(chaosPollEvery)
	defer tick.Stop()
	for !cond() {
		if t.Failed() {
			t.FailNow()
		}
		select {
		case <-tick.C:
		case <-p.done:
			t.Fatalf("txsink exited (%v) before %s\nstderr:\n%s", p.cmd.ProcessState, what, tail(p.Stderr()))
		case <-deadline.C:
			t.Fatalf("not within %s: %s (%d commits logged)\n%s\nstderr:\n%s", pgChaosDeadline, what, p.Commits(), why(), tail(p.Stderr()))
		}
	}
}

// writePgChaosConfig writes the pipeline's config: the postgres source
// with snapshot: initial in chunks of pgChaosChunkRows, two tables at a
// time, in transaction mode with small frequent flushes.
func writePgChaosConfig(t *testing.T, name, srcURL, dstURL string) string {
	t.Helper()
	conf := "name: " + name + "\nsource:\n  type: postgres\n  format: txsink-json\n  url: " + srcURL + "\n" +
		"  tables: [public.orders, public.order_items, public.order_events]\n  snapshot: initial\n" +
		fmt.Sprintf("  snapshot.chunk-rows: %d\n  snapshot.parallel: 2\n", pgChaosChunkRows) +
		"target:\n  url: " + dstURL + "\ntables:\n  - source: public.order_events\n    append-only: true\n  - source: public.*\n" +
		"sink:\n  buffer-flush.interval: 50ms\n  transaction.multi-table.enabled: true\n  transaction.multi-table.buffer-size: 32KiB\n"
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// pgChaosWriters are the source's writer goroutines.
type pgChaosWriters struct {
	stopped atomic.Bool
	wg      sync.WaitGroup
	txns    atomic.Int64
}

// startPgChaosWriters starts n writers, each on a connection of its own,
// running pgChaosTx until stopped (an error fails the test and ends the
// writer); writer w owns the order ids congruent to w modulo n, so
// writers never wait for each other's locks. A stop waits for the
// transaction in flight to end: a context cancelled during its COMMIT
// would leave the writer gone while the server may still commit it,
// after the test read the source's final state.
func startPgChaosWriters(t *testing.T, src *testdb.DB, n int, seed uint64) *pgChaosWriters {
	t.Helper()
	ctx := context.Background()
	w := &pgChaosWriters{}
	t.Cleanup(w.stop)
	for i := range n {
		conn, err := src.SQL.Conn(ctx)
		if err != nil {
			t.Fatalf("writer connection: %v", err)
		}
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			defer conn.Close()
			rng := rand.New(rand.NewPCG(seed, uint64(100+i)))
			for !w.stopped.Load() {
				if err := pgChaosTx(ctx, conn, rng, i, n); err != nil {
					t.Errorf("writer %d, after %d transactions of all writers: %v", i, w.txns.Load(), err)
					return
				}
				w.txns.Add(1)
			}
		}()
	}
	return w
}

func (w *pgChaosWriters) stop() {
	w.stopped.Store(true)
	w.wg.Wait()
}

// finish stops the writers and returns the transactions they committed.
func (w *pgChaosWriters) finish(t *testing.T) int64 {
	t.Helper()
	w.stop()
	return w.txns.Load()
}

// pgChaosTx runs one source transaction of writer w (of n): one to three
// changes of its orders, each keeping every order's amount the sum of its
// items' qty*price, and an event per change.
func pgChaosTx(ctx context.Context, conn *sql.Conn, rng *rand.Rand, w, n int) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	space := pgChaosOrders * 6 / 5 / n
	pick := func() int { return w + n*rng.IntN(space) }
	exec := func(q string, args ...any) (int64, error) {
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", q, err)
		}
		return res.RowsAffected()
	}
	for range 1 + rng.IntN(3) {
		id := pick()
		var event string
		var err error
		switch op := rng.IntN(6); op {
		case 0, 1: // a new order, or a replaced one
			event = "placed"
			if _, err = exec("DELETE FROM order_items WHERE order_id = $1", id); err != nil {
				break
			}
			if _, err = exec("DELETE FROM orders WHERE id = $1", id); err != nil {
				break
			}
			total := 0
			for l := range 1 + rng.IntN(4) {
				qty, price := 1+rng.IntN(5), 100+rng.IntN(9000)
				total += qty * price
				if _, err = exec("INSERT INTO order_items VALUES ($1, $2, $3, $4, $5::numeric / 100)", id, l, fmt.Sprint("sku", rng.IntN(50)), qty, price); err != nil {
					break
				}
			}
			if err == nil {
				at := time.Date(2026, 3, 4, 5, 6, 7, 891e6, time.UTC).Add(time.Duration(id) * time.Second).Format("2006-01-02 15:04:05.000")
				_, err = exec("INSERT INTO orders VALUES ($1, $2, 'NEW', $3::numeric / 100, $4::timestamp, NULL)",
					id, fmt.Sprint("customer ", rng.IntN(1000)), total, at)
			}
		case 2: // a changed item, and the amount with it
			event = "changed"
			if _, err = exec("UPDATE orders SET amount = amount + COALESCE((SELECT price FROM order_items WHERE order_id = $1 AND line_no = 0), 0), status = 'PAID' WHERE id = $1", id); err == nil {
				_, err = exec("UPDATE order_items SET qty = qty + 1 WHERE order_id = $1 AND line_no = 0", id)
			}
		case 3: // a deleted order
			event = "deleted"
			if _, err = exec("DELETE FROM order_items WHERE order_id = $1", id); err == nil {
				_, err = exec("DELETE FROM orders WHERE id = $1", id)
			}
		case 4: // an order's key moves, its items' keys with it
			event = "moved"
			to := pick()
			var moved int64
			moved, err = exec("UPDATE orders SET id = $2, note = 'moved from ' || $1::text WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM orders WHERE id = $2)", id, to)
			if err == nil && moved == 1 {
				_, err = exec("UPDATE order_items SET order_id = $2 WHERE order_id = $1", id, to)
			}
			id = to
		case 5: // an item's key moves within its order
			event = "renumbered"
			_, err = exec("UPDATE order_items SET line_no = line_no + 10 WHERE order_id = $1 AND line_no = (SELECT MAX(line_no) FROM order_items WHERE order_id = $1)", id)
		}
		if err != nil {
			return err
		}
		if _, err := exec("INSERT INTO order_events VALUES ($1, $2)", id, event); err != nil {
			return err
		}
	}
	return tx.Commit()
}
