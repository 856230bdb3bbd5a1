//go:build unix

package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
)

// TestChaos runs the real txsink binary in transaction mode
// (sink.transaction.multi-table.enabled) on a 4-partition orders workload,
// following its files, against each real target (SQLite, MariaDB,
// PostgreSQL), and kills it with SIGKILL again and again at random moments:
// after a random number of logged commits plus a random few milliseconds
// (so a kill lands between commits, inside one, or just after one), and
// sometimes before its first commit (while it connects, fences the
// previous instance and resumes). It restarts it after every kill; after
// the last kill it lets the run apply everything (the progress table
// reaching the end of every file), stops it with SIGTERM and expects exit 0
// and the one-line summary.
//
// The target has, besides workload.Schema, audit tables filled by AFTER
// INSERT/UPDATE/DELETE triggers on order_items and an AFTER INSERT trigger
// on order_events (chaos_audit_test.go). Checked:
//
//   - after every kill, the tables are exactly the changelog replayed up to
//     the committed progress, which never goes back, and order_events holds
//     exactly the inserts of that prefix (observe);
//   - at the end, the final state is exact, order_events holds every insert
//     of the changelog once (compared event by event), and its audit table
//     exactly as many rows as a run without kills writes (res.Events);
//   - after every kill and at the end, each order_items key's audit rows walk
//     forward through that key's history and end at the table's row: no
//     unit applied twice (a replay is an audit step that stays put or goes
//     back), whatever the flush boundaries were;
//   - a reader polling workload.Invariant on its own connection for the
//     whole run never sees a source transaction half applied.
//
// The figures (kills, restarts, rows checked, duplicates, partial
// transactions seen, audit rows, duration) are logged per target.
//
// By default (CI) each target gets 3 kills on a workload of 4000 orders.
// A soak is one command, for example:
//
//	TXSINK_CHAOS_KILLS=100 go test -race -count=1 -timeout 60m -run Chaos -v ./cmd/txsink
//
// Environment:
//
//	TXSINK_CHAOS_KILLS     kills per target (default 3)
//	TXSINK_CHAOS_ORDERS    orders in the workload (default 4000, and at
//	                       least 500 per kill, so the run outlasts the kills)
//	TXSINK_CHAOS_SEED      the seed of the workload and the kill schedule
//	                       (default: the time; logged, to reproduce a run)
//	TXSINK_CHAOS_DIALECTS  the targets, comma-separated (default
//	                       sqlite,mysql,postgres)
func TestChaos(t *testing.T) {
	txsinkBinary(t) // build (or skip) before the servers are set up
	kills := chaosEnvInt(t, "TXSINK_CHAOS_KILLS", 3)
	orders := chaosEnvInt(t, "TXSINK_CHAOS_ORDERS", max(4000, 500*kills))
	seed := chaosSeed(t)
	dialects := chaosDialects()
	t.Logf("chaos: %d kills per target, %d orders, seed %d (TXSINK_CHAOS_SEED=%d reproduces the workload and the schedule)", kills, orders, seed, seed)

	res := workload.Generate(workload.Spec{Orders: orders, Partitions: 4, Seed: seed, Events: true})
	hist := itemHistories(res)
	var reports []chaosReport
	for _, d := range dialects {
		t.Run(d, func(t *testing.T) {
			db := testdb.Open(t, d)
			db.Exec(t, workload.Schema(db.Dialect)...)
			db.Exec(t, auditSchema(db.Dialect)...)
			r := chaosRun(t, db, d, res, hist, kills, seed, true)
			reports = append(reports, r)
		})
	}
	var total chaosReport
	for _, r := range reports {
		total.add(r)
	}
	if len(reports) > 1 {
		total.dialect = "all targets"
		t.Log(total)
	}
}

// chaosReport holds one target's figures.
type chaosReport struct {
	dialect        string
	audited        bool  // the target has audit triggers (not StarRocks)
	kills          int   // SIGKILLs sent
	earlyKills     int   // of them, before the run's first logged commit
	restarts       int   // runs started after a kill
	commits        int   // commits the runs logged
	lines          int   // changelog lines
	rowsChecked    int   // rows compared with the changelog, after every kill and at the end
	duplicates     int   // rows or audit steps applied twice (must be 0)
	lost           int   // rows missing (must be 0)
	polls          int64 // invariant polls by the concurrent reader
	partial        int64 // invariant violations the reader saw: partial source transactions (must be 0)
	itemAudit      int   // order_items audit rows at the end
	itemLo, itemHi int   // the range any batching can give
	eventAudit     int   // order_events audit rows at the end
	wantEventAudit int   // what a run without kills writes
	dur            time.Duration
}

func (r *chaosReport) add(o chaosReport) {
	r.audited = r.audited || o.audited
	r.kills += o.kills
	r.earlyKills += o.earlyKills
	r.restarts += o.restarts
	r.commits += o.commits
	r.lines += o.lines
	r.rowsChecked += o.rowsChecked
	r.duplicates += o.duplicates
	r.lost += o.lost
	r.polls += o.polls
	r.partial += o.partial
	r.itemAudit += o.itemAudit
	r.itemLo += o.itemLo
	r.itemHi += o.itemHi
	r.eventAudit += o.eventAudit
	r.wantEventAudit += o.wantEventAudit
	r.dur += o.dur
}

func (r chaosReport) String() string {
	audit := "no audit tables; "
	if r.audited {
		audit = fmt.Sprintf("audit rows: order_items %d (any batching: %d..%d), order_events %d (clean run: %d); ",
			r.itemAudit, r.itemLo, r.itemHi, r.eventAudit, r.wantEventAudit)
	}
	return fmt.Sprintf("chaos %s: %d kills (%d before a first commit), %d restarts, %d commits over %d changelog lines; "+
		"%d rows checked, %d duplicates, %d lost; reader: %d polls, %d partial source transactions seen; %s%s",
		r.dialect, r.kills, r.earlyKills, r.restarts, r.commits, r.lines,
		r.rowsChecked, r.duplicates, r.lost, r.polls, r.partial, audit, r.dur.Round(time.Millisecond))
}

// Deadlines of the chaos waits; each wait returns as soon as its
// condition holds.
const (
	chaosPollEvery    = 20 * time.Millisecond // how often the progress table is read while waiting for it
	chaosDoneDeadline = 10 * time.Minute      // until the last run has applied everything
)

// chaosRun kills and restarts txsink runs into db (named target in the
// report), whose tables the
// caller has made: workload.Schema's, and with audit also auditSchema's
// triggers, whose rows are then checked too (a target without triggers,
// StarRocks, is checked by its tables, its progress and the event rows).
func chaosRun(t *testing.T, db *testdb.DB, target string, res *workload.Result, hist map[string][]string, kills int, seed uint64, audit bool) chaosReport {
	began := time.Now()
	f := newFeed(t, res)
	dir := t.TempDir()
	paths := make([]string, len(f.lines))
	for p := range f.lines {
		f.appendLines(t, dir, p, 0, len(f.lines[p]))
		paths[p] = fileName(p)
	}
	const name = "chaos"
	cfg := writeChaosConfig(t, dir, name, db.URL, paths)
	rep := chaosReport{dialect: target, audited: audit, lines: f.totalLines()}
	lo, hi := itemAuditBounds(hist)
	rep.itemLo, rep.itemHi = lo, hi

	reader := startInvariantReader(t, db)
	complete := func() bool { return progressComplete(t, db, f, dir, name) }

	rng := rand.New(rand.NewPCG(seed, uint64(len(db.Dialect)))) // each target its own schedule
	prev := observation{lines: make([]int, len(f.lines))}
	for k := 1; k <= kills; k++ {
		// One kill in nine is aimed before the first commit: while the
		// run starts, connects, fences the killed instance and resumes.
		// Its delay is short: a run into SQLite commits the 18,000 lines
		// of 1500 orders in about 120 ms, and once a 114 ms delay left
		// the next kill nothing to kill.
		n := rng.IntN(9)
		jitter := time.Duration(rng.IntN(20)) * time.Millisecond
		if n == 0 {
			jitter = time.Duration(rng.IntN(60)) * time.Millisecond
		}
		p := start(t, "run", "--config", cfg, "--log-level", "debug")
		if k > 1 {
			rep.restarts++
		}
		if !p.waitCommitsOrDone(n, complete) {
			t.Fatalf("kill %d: the run applied the whole changelog (%d lines) before it could be killed; raise TXSINK_CHAOS_ORDERS", k, f.totalLines())
		}
		if jitter > 0 {
			// Not a wait for anything: it moves the kill to a random
			// point of the run's work.
			select {
			case <-time.After(jitter):
			case <-p.done:
			}
		}
		p.kill(k)
		rep.kills++
		rep.commits += p.Commits()
		if p.Commits() == 0 {
			rep.earlyKills++
		}
		o, rows := observeWithAudit(t, db, f, dir, name, audit)
		checkMonotonic(t, prev.lines, o.lines)
		rep.rowsChecked += len(o.state["orders"]) + len(o.state["order_items"]) + o.events
		if audit {
			a := checkItemAudit(t, hist, rows, o.state["order_items"])
			rep.duplicates += a.duplicates
			rep.rowsChecked += a.rows
		}
		if o.total() == f.totalLines() {
			t.Fatalf("kill %d: the run applied the whole changelog before it was killed; raise TXSINK_CHAOS_ORDERS", k)
		}
		if testing.Verbose() || kills <= 10 || k%10 == 0 {
			t.Logf("kill %d after %d logged commits (+%s): %d of %d lines committed", k, p.Commits(), jitter, o.total(), f.totalLines())
		}
		if t.Failed() {
			// The first broken state is the one to look at.
			t.Fatalf("stopped after kill %d; the reader so far: %d polls, %d invariant violations (partial source transactions)",
				k, reader.polls.Load(), reader.violations.Load())
		}
		prev = o
	}

	// The last run: it applies everything, then SIGTERM stops it.
	p := start(t, "run", "--config", cfg, "--log-level", "debug")
	if kills > 0 {
		rep.restarts++
	}
	p.waitDone(complete)
	p.signal(syscall.SIGTERM)
	if code := p.wait(); code != 0 {
		t.Fatalf("the last txsink run exited %d (%v) after SIGTERM, want 0\nstderr:\n%s", code, p.cmd.ProcessState, tail(p.Stderr()))
	}
	rep.commits += p.Commits()
	sum := parseSummary(t, name, p.Stdout())
	if want := int64(f.totalLines() - prev.total()); sum.events != want {
		t.Errorf("the last run read %d events, want exactly the %d after the committed progress", sum.events, want)
	}
	rep.polls, rep.partial = reader.finish(t)

	checkFinal(t, db, f, dir, name)
	final, rows := observeWithAudit(t, db, f, dir, name, audit)
	checkMonotonic(t, prev.lines, final.lines)
	dups, lost := compareEvents(t, eventCounts(t, db), wantEventCounts(res))
	rep.duplicates += dups
	rep.lost += lost
	rep.rowsChecked += len(final.state["orders"]) + len(final.state["order_items"]) + final.events
	if audit {
		a := checkItemAudit(t, hist, rows, final.state["order_items"])
		rep.itemAudit = a.rows
		rep.duplicates += a.duplicates
		if a.rows < lo || a.rows > hi {
			t.Errorf("order_items_audit has %d rows; any batching of this changelog gives %d to %d", a.rows, lo, hi)
		}
		rep.wantEventAudit = res.Events
		rep.eventAudit = checkEventAudit(t, db, res.Events)
		if d := rep.eventAudit - res.Events; d > 0 {
			rep.duplicates += d
		}
		rep.rowsChecked += a.rows + rep.eventAudit
	}
	rep.dur = time.Since(began)

	if rep.partial != 0 {
		t.Errorf("the reader saw %d invariant violations in %d polls: source transactions applied in parts", rep.partial, rep.polls)
	}
	if rep.polls < int64(kills)+1 {
		t.Errorf("the reader polled only %d times over %d runs: too little overlap to mean anything", rep.polls, kills+1)
	}
	if rep.duplicates != 0 || rep.lost != 0 {
		t.Errorf("%d duplicates and %d lost rows, want none", rep.duplicates, rep.lost)
	}
	t.Log(rep)
	return rep
}

// observeWithAudit is observe (which checks the tables against the
// changelog up to the committed progress) plus, with audit, the
// order_items audit rows of the same commit: a SIGKILLed run's last COMMIT
// may still land on the server after observe has read, so the audit is
// read until the progress is the same before and after it.
func observeWithAudit(t *testing.T, db *testdb.DB, f *feed, dir, pipeline string, audit bool) (observation, []auditRow) {
	t.Helper()
	if !audit {
		return observe(t, db, f, dir, pipeline), nil
	}
	for try := 0; try < 20; try++ {
		o := observe(t, db, f, dir, pipeline)
		audit := readItemAudit(t, db)
		if slices.Equal(progressLines(t, db, f, dir, pipeline), o.lines) {
			return o, audit
		}
	}
	t.Fatal("the progress kept changing while the test read the target: is a txsink still running?")
	return observation{}, nil
}

// progressLines reads the pipeline's progress as lines per partition.
func progressLines(t *testing.T, db *testdb.DB, f *feed, dir, pipeline string) []int {
	t.Helper()
	rows := progressRows(t, db, pipeline)
	lines := make([]int, len(f.lines))
	for p := range lines {
		r, ok := rows[fileName(p)]
		if !ok {
			r, ok = rows[filepath.Join(dir, fileName(p))]
		}
		if ok {
			n, at := f.linesAt(p, r[0])
			if !at {
				t.Fatalf("progress of %s is byte %d: not a line end", fileName(p), r[0])
			}
			lines[p] = n
		}
	}
	return lines
}

// writeChaosConfig writes the chaos pipeline's config: transaction mode,
// following the files, and flushes small and frequent (a buffer of 32 KiB,
// a 50 ms interval) so that a run commits many times and a kill finds
// work in every stage.
func writeChaosConfig(t *testing.T, dir, name, url string, paths []string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\n", name)
	// Each file is a partition of its own, read concurrently.
	fmt.Fprintf(&b, "source:\n  type: file\n  partitions: [[%s]]\n  format: txsink-json\n  follow: true\n", strings.Join(paths, "], ["))
	fmt.Fprintf(&b, "target:\n  url: %s\n", strconv.Quote(url))
	b.WriteString("tables:\n  - source: shop.orders\n  - source: shop.order_items\n  - source: shop.order_events\n    append-only: true\n")
	b.WriteString("sink:\n")
	b.WriteString("  buffer-flush.interval: 50ms\n")
	b.WriteString("  transaction.multi-table.enabled: true\n")
	b.WriteString("  transaction.multi-table.buffer-size: 32KiB\n")
	b.WriteString("  transaction.multi-table.mini-switch-interval: 10ms\n")
	b.WriteString("  transaction.multi-table.min-switch-bytes: 0\n")
	path := filepath.Join(dir, "chaos.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// progressComplete reports whether the pipeline's progress has reached the
// end of every partition's file.
func progressComplete(t *testing.T, db *testdb.DB, f *feed, dir, pipeline string) bool {
	t.Helper()
	rows := progressRows(t, db, pipeline)
	for p := range f.lines {
		r, ok := rows[fileName(p)]
		if !ok {
			r, ok = rows[filepath.Join(dir, fileName(p))]
		}
		if !ok || r[0] != f.ends[p][len(f.ends[p])-1] {
			return false
		}
	}
	return true
}

// waitCommitsOrDone waits until the child has logged n commits (true) or
// done() holds (false), reading done() every chaosPollEvery. It fails the
// test if the child exits or the deadline passes first.
func (p *proc) waitCommitsOrDone(n int, done func() bool) bool {
	p.t.Helper()
	deadline := time.NewTimer(startDeadline)
	defer deadline.Stop()
	tick := time.NewTicker(chaosPollEvery)
	defer tick.Stop()
	for {
		if p.Commits() >= n {
			return true
		}
		select {
		case <-p.notify:
		case <-tick.C:
			if done() {
				return p.Commits() >= n
			}
		case <-p.done:
			p.t.Fatalf("txsink exited (%v) after %d commits, before the %d awaited\nstdout:\n%s\nstderr:\n%s",
				p.cmd.ProcessState, p.Commits(), n, p.Stdout(), tail(p.Stderr()))
		case <-deadline.C:
			p.t.Fatalf("txsink logged %d commits in %s, want %d\nstderr:\n%s", p.Commits(), startDeadline, n, tail(p.Stderr()))
		}
	}
}

// waitDone waits until done() holds, reading it after every logged commit
// and every chaosPollEvery. It fails the test if the child exits or the
// deadline passes first.
func (p *proc) waitDone(done func() bool) {
	p.t.Helper()
	deadline := time.NewTimer(chaosDoneDeadline)
	defer deadline.Stop()
	tick := time.NewTicker(chaosPollEvery)
	defer tick.Stop()
	for !done() {
		select {
		case <-p.notify:
		case <-tick.C:
		case <-p.done:
			p.t.Fatalf("txsink exited (%v) before applying everything\nstdout:\n%s\nstderr:\n%s", p.cmd.ProcessState, p.Stdout(), tail(p.Stderr()))
		case <-deadline.C:
			p.t.Fatalf("txsink did not apply the whole changelog within %s (%d commits logged)\nstderr:\n%s", chaosDoneDeadline, p.Commits(), tail(p.Stderr()))
		}
	}
}

// invariantReader polls workload.Invariant on a connection of its own
// until finished, counting polls and the violations it sees. A phased
// reader's query also returns whether the target promises the invariant
// yet (1) or not (0: a PostgreSQL source's initial copy is not
// transactionally consistent until the stream passes its windows); the
// polls and violations of before are counted apart, in early.
type invariantReader struct {
	polls, violations atomic.Int64
	early             earlyCounts
	cancel            context.CancelFunc
	wg                sync.WaitGroup
	err               error // set before wg.Done
}

// earlyCounts are a phased reader's polls and violations seen before the
// target promised the invariant.
type earlyCounts struct {
	polls, violations atomic.Int64
}

func startInvariantReader(t *testing.T, db *testdb.DB) *invariantReader {
	t.Helper()
	return startReader(t, db, workload.Invariant, false)
}

// startReader starts a reader polling q: one row of the violations, and
// with phased whether they count (see invariantReader).
func startReader(t *testing.T, db *testdb.DB, q string, phased bool) *invariantReader {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		cancel()
		t.Fatalf("reader connection: %v", err)
	}
	r := &invariantReader{cancel: cancel}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer conn.Close()
		for ctx.Err() == nil {
			n, promised := int64(0), int64(1)
			dest := []any{&n}
			if phased {
				dest = append(dest, &promised)
			}
			if err := conn.QueryRowContext(ctx, q).Scan(dest...); err != nil {
				if ctx.Err() == nil {
					r.err = err
				}
				return
			}
			if promised == 0 {
				r.early.polls.Add(1)
				r.early.violations.Add(n)
				continue
			}
			r.polls.Add(1)
			r.violations.Add(n)
		}
	}()
	t.Cleanup(r.stop)
	return r
}

func (r *invariantReader) stop() {
	r.cancel()
	r.wg.Wait()
}

// finish stops the reader and returns its counts; a query error fails the
// test.
func (r *invariantReader) finish(t *testing.T) (polls, violations int64) {
	t.Helper()
	r.stop()
	if r.err != nil && r.err != sql.ErrConnDone {
		t.Fatalf("the invariant reader failed after %d polls: %v", r.polls.Load(), r.err)
	}
	return r.polls.Load(), r.violations.Load()
}

// chaosDialects are the targets of TXSINK_CHAOS_DIALECTS
// (comma-separated), by default testdb.Dialects.
func chaosDialects() []string {
	if s := os.Getenv("TXSINK_CHAOS_DIALECTS"); s != "" {
		return strings.Split(s, ",")
	}
	return testdb.Dialects
}

// kill SIGKILLs the child, the chaos tests' k-th kill, and fails the test
// unless that signal is what ended it.
func (p *proc) kill(k int) {
	p.t.Helper()
	p.signal(syscall.SIGKILL)
	p.wait()
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		p.t.Fatalf("kill %d: txsink ended with %v, not by SIGKILL\nstderr:\n%s", k, p.cmd.ProcessState, tail(p.Stderr()))
	}
}

// chaosSeed is TXSINK_CHAOS_SEED, or the time when it is not set.
func chaosSeed(t *testing.T) uint64 {
	t.Helper()
	s := os.Getenv("TXSINK_CHAOS_SEED")
	if s == "" {
		return uint64(time.Now().UnixNano())
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("TXSINK_CHAOS_SEED=%q: %v", s, err)
	}
	return v
}

func chaosEnvInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		t.Fatalf("%s=%q: want a whole number >= 0", name, s)
	}
	return v
}
