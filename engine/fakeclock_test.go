package engine_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/txsink/txsink/clock/clocktest"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/sink"
)

// The tests below run whole pipelines (file source, decoding, reduction,
// the committer, a real target) on a fake clock: what the engine does by
// time happens exactly when the test advances the clock, never by the
// wall clock, and no test sleeps.

// clockStart is the fake clocks' time at the start of each test.
var clockStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// clockRun is a pipeline running on a fake clock, with the units it
// commits and the moment its loop took every record of its file.
type clockRun struct {
	t       *testing.T
	clock   *clocktest.Clock
	e       *engine.Engine
	commits chan *commit.Unit
	read    *readAll
	cancel  context.CancelFunc
	runErr  chan error
}

// startClockRun writes lines to the file of cfg's source and starts Run
// of an engine on a fake clock over it.
func startClockRun(t *testing.T, cfg *config.Config, lines []string, opts ...engine.Option) *clockRun {
	t.Helper()
	r := newClockRun(t, cfg, lines, opts...)
	r.start()
	return r
}

// newClockRun is startClockRun without the start: the engine is made (its
// target opened, its progress read), Run not yet started.
func newClockRun(t *testing.T, cfg *config.Config, lines []string, opts ...engine.Option) *clockRun {
	t.Helper()
	data := strings.Join(lines, "\n") + "\n"
	path := filepath.Join(t.TempDir(), "p0.jsonl")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Source.Set("paths", []string{path})
	// Progress counts the records' bytes, their line ends left out.
	r := &clockRun{t: t, clock: clocktest.New(clockStart), commits: make(chan *commit.Unit, 16),
		read: &readAll{want: int64(len(data) - len(lines)), done: make(chan struct{})}, runErr: make(chan error, 1)}
	opts = append(opts, engine.WithClock(r.clock), engine.WithCommitHook(func(u *commit.Unit) { r.commits <- u }))
	r.e = newEngine(t, cfg, opts...)
	return r
}

// start starts Run.
func (r *clockRun) start() {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.runErr <- r.e.Run(ctx, engine.RunOptions{Progress: r.read}) }()
	r.t.Cleanup(func() {
		cancel()
		<-r.runErr
	})
}

// readAll is a Progressor that closes done once want bytes were read:
// Run's loop has then taken every record of the file.
type readAll struct {
	want, got int64
	done      chan struct{}
}

func (p *readAll) Read(n int64) {
	if p.got += n; p.got >= p.want && p.got-n < p.want {
		close(p.done)
	}
}

// awaitRead waits until Run's loop took every record.
func (r *clockRun) awaitRead() {
	r.t.Helper()
	select {
	case <-r.read.done:
	case err := <-r.runErr:
		r.t.Fatalf("Run ended before reading its file: %v", err)
	}
}

// awaitDeadline waits until the engine arms a timer for at.
func (r *clockRun) awaitDeadline(at time.Time) {
	r.t.Helper()
	if err := r.clock.AwaitDeadline(r.t.Context(), at); err != nil {
		r.t.Fatalf("waiting for a timer at start+%v (armed: %v): %v", at.Sub(clockStart), r.clock.Armed(), err)
	}
}

// nextCommit waits for the next unit committed.
func (r *clockRun) nextCommit() *commit.Unit {
	r.t.Helper()
	select {
	case u := <-r.commits:
		return u
	case err := <-r.runErr:
		r.t.Fatalf("Run ended before the commit: %v", err)
		return nil
	}
}

// noCommit fails if a unit was committed.
func (r *clockRun) noCommit(when string) {
	r.t.Helper()
	select {
	case u := <-r.commits:
		r.t.Fatalf("%s: a unit was committed (progress %v)", when, u.Progress)
	default:
	}
}

// stop ends Run as a signal does and returns its stats.
func (r *clockRun) stop() engine.Stats {
	r.t.Helper()
	r.cancel()
	if err := <-r.runErr; err != nil {
		r.t.Fatalf("Run: %v", err)
	}
	r.runErr <- nil // for the cleanup
	return r.e.Stats()
}

// TestFakeClockFlushInterval: with a flush interval of an hour, nothing
// read is committed until the fake clock passes the interval, and then
// everything buffered is committed as exactly one unit.
func TestFakeClockFlushInterval(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, `CREATE TABLE t (id INT NOT NULL PRIMARY KEY, v VARCHAR(10) NOT NULL)`)
		cfg := pipeline(db, config.Table{Source: "s.t"})
		cfg.Source.Set("follow", true)
		cfg.Sink.FlushInterval = time.Hour
		r := startClockRun(t, cfg, []string{
			`{"op":"+I","table":"s.t","row":{"id":1,"v":"a"}}`,
			`{"op":"+I","table":"s.t","row":{"id":2,"v":"b"}}`,
			`{"op":"+U","table":"s.t","row":{"id":1,"v":"c"}}`,
		})
		r.awaitRead()
		r.awaitDeadline(clockStart.Add(time.Hour))
		r.clock.Advance(time.Hour - time.Nanosecond)
		r.awaitDeadline(clockStart.Add(time.Hour))
		r.noCommit("before the interval")
		if got := query(t, db, "SELECT COUNT(*) FROM t"); got != "0" {
			t.Fatalf("%s rows before the interval, want none", got)
		}
		r.clock.Advance(time.Nanosecond)
		if u := r.nextCommit(); u.Changes != 3 {
			t.Errorf("the unit holds %d changes, want all 3 read", u.Changes)
		}
		if got := query(t, db, "SELECT id, v FROM t ORDER BY id"); got != "1|c\n2|b" {
			t.Errorf("rows = %q, want 1|c and 2|b", got)
		}
		if st := r.stop(); st.Commits != 1 {
			t.Errorf("%d commits, want exactly 1", st.Commits)
		}
		r.noCommit("after stopping")
	})
}

// retries records the waits the engine reports for its retries.
type retries struct{ waits []time.Duration }

func (r *retries) OnRetry(_ int, wait time.Duration, _ error) { r.waits = append(r.waits, wait) }

// TestFakeClockRetryBackoff: a unit whose commit fails transiently twice
// is applied again only once the fake clock has passed each backoff wait,
// the waits drawn from the injected random source (half the backoff plus a
// jitter of up to half), the backoff doubling between them.
func TestFakeClockRetryBackoff(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, `CREATE TABLE t (id INT NOT NULL PRIMARY KEY, v VARCHAR(10) NOT NULL)`)
		cfg := pipeline(db, config.Table{Source: "s.t"})
		const seed1, seed2 = 1, 2
		jitter := rand.New(rand.NewPCG(seed1, seed2))
		var want []time.Duration
		for _, backoff := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond} {
			want = append(want, backoff/2+time.Duration(jitter.Int64N(int64(backoff/2+1))))
		}
		var attempts atomic.Int32
		seen := &retries{}
		r := startClockRun(t, cfg, []string{`{"op":"+I","table":"s.t","row":{"id":1,"v":"a"}}`},
			engine.WithRandom(rand.NewPCG(seed1, seed2)), engine.WithHooks(seen),
			engine.WithBeforeCommitHook(func(*commit.Unit) error {
				if attempts.Add(1) <= 2 {
					return &sink.Error{Op: "commit", Transient: true, Err: errors.New("connection reset by peer (injected)")}
				}
				return nil
			}))
		at := clockStart
		for i, wait := range want {
			at = at.Add(wait)
			r.awaitDeadline(at)
			r.clock.Advance(wait - time.Nanosecond)
			r.awaitDeadline(at)
			if n := attempts.Load(); n != int32(i+1) {
				t.Fatalf("%d attempts before the end of wait %d, want %d", n, i+1, i+1)
			}
			r.clock.Advance(time.Nanosecond)
		}
		r.nextCommit()
		if n := attempts.Load(); n != 3 {
			t.Errorf("%d attempts, want 3", n)
		}
		if err := <-r.runErr; err != nil {
			t.Fatalf("Run: %v", err)
		}
		r.runErr <- nil
		if st := r.e.Stats(); st.Retries != 2 || st.Commits != 1 {
			t.Errorf("stats: %d retries, %d commits; want 2 and 1", st.Retries, st.Commits)
		}
		if len(seen.waits) != 2 || seen.waits[0] != want[0] || seen.waits[1] != want[1] {
			t.Errorf("reported waits %v, want %v", seen.waits, want)
		}
		if got := query(t, db, "SELECT id, v FROM t"); got != "1|a" {
			t.Errorf("rows = %q, want 1|a", got)
		}
	})
}

// TestFakeClockIdleFallback: in transaction mode, a source transaction
// that ended within the mini-switch interval of its partition's last
// switch stays in the partition's active chunk; with the source idle, no
// later end switches it, and the idle fallback freezes it once the fake
// clock passes the mini-switch interval after its end — not before, even
// though commit intervals pass meanwhile — and it is committed then.
func TestFakeClockIdleFallback(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, `CREATE TABLE t (id INT NOT NULL PRIMARY KEY, v VARCHAR(10) NOT NULL)`)
		cfg := pipeline(db, config.Table{Source: "s.t"})
		cfg.Source.Set("follow", true)
		cfg.Sink.TxnEnabled = true
		cfg.Sink.FlushInterval = 2 * time.Second
		cfg.Sink.TxnMiniSwitchInterval = 5 * time.Second
		cfg.Sink.TxnMinSwitchBytes = 0
		r := startClockRun(t, cfg, []string{
			`{"op":"+I","table":"s.t","row":{"id":1,"v":"a"},"txn":"t1","txn_end":true}`,
			`{"op":"+I","table":"s.t","row":{"id":2,"v":"b"},"txn":"t2","txn_end":true}`,
		})
		r.awaitRead()
		// t1's end is the partition's first: it switches at once, and the
		// commit interval commits it.
		r.awaitDeadline(clockStart.Add(2 * time.Second))
		r.clock.Advance(2 * time.Second)
		if u := r.nextCommit(); u.Changes != 1 {
			t.Fatalf("the first unit holds %d changes, want t1's 1", u.Changes)
		}
		if got := query(t, db, "SELECT id FROM t ORDER BY id"); got != "1" {
			t.Fatalf("rows after the first commit = %q, want t1's 1", got)
		}
		// t2 waits for the idle fallback, 5s after its end.
		fallback := clockStart.Add(5 * time.Second)
		r.awaitDeadline(fallback)
		r.clock.Set(fallback.Add(-time.Nanosecond))
		r.awaitDeadline(fallback)
		r.noCommit("before the idle fallback")
		r.clock.Advance(time.Nanosecond)
		if u := r.nextCommit(); u.Changes != 1 {
			t.Errorf("the second unit holds %d changes, want t2's 1", u.Changes)
		}
		if got := query(t, db, "SELECT id FROM t ORDER BY id"); got != "1\n2" {
			t.Errorf("rows = %q, want 1 and 2", got)
		}
		if st := r.stop(); st.Commits != 2 || st.Txns != 2 {
			t.Errorf("%d commits of %d transactions, want 2 of 2", st.Commits, st.Txns)
		}
	})
}
