package engine_test

import (
	"context"
	"fmt"
	"github.com/txsink/txsink/sink"
	"os"
	"path/filepath"
	"slices"
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
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/schema"
)

type recordingHook struct {
	mu      sync.Mutex
	changes int
	commits []engine.CommitInfo
	stopped []error
}

func (h *recordingHook) OnChange(*changelog.Change) { h.mu.Lock(); h.changes++; h.mu.Unlock() }
func (h *recordingHook) OnCommit(i engine.CommitInfo) {
	h.mu.Lock()
	h.commits = append(h.commits, i)
	h.mu.Unlock()
}
func (h *recordingHook) OnStop(err error) {
	h.mu.Lock()
	h.stopped = append(h.stopped, err)
	h.mu.Unlock()
}

// TestHooksAndStatus checks that hooks see every change and commit, and
// that Status, read from another goroutine throughout the run, ends with
// every partition committed to its end.
func TestHooksAndStatus(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 300, Partitions: 2, Seed: 2, Events: true})
	for _, mode := range []string{"plain", "transaction"} {
		t.Run(mode, func(t *testing.T) {
			db := testdb.SQLite(t)
			db.Exec(t, workload.Schema("sqlite")...)
			paths := writeWorkload(t, res)
			cfg := workloadPipeline(db, paths)
			if mode == "transaction" {
				txnPipeline(cfg)
			}
			h := &recordingHook{}
			e := newEngine(t, cfg, engine.WithHooks(h))
			if st := e.Status(); st.State != engine.StateStarting {
				t.Errorf("state before Run = %s", st.State)
			}
			stop := make(chan struct{})
			var polls sync.WaitGroup
			polls.Add(1)
			go func() {
				defer polls.Done()
				for {
					select {
					case <-stop:
						return
					default:
						_ = e.Status()
					}
				}
			}()
			if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
				t.Fatal(err)
			}
			close(stop)
			polls.Wait()
			st := e.Status()
			if st.State != engine.StateStopped || st.Error != "" {
				t.Errorf("state %s, error %q", st.State, st.Error)
			}
			if st.BufferedBytes != 0 || st.OpenTxns != 0 {
				t.Errorf("after the run: %d bytes buffered, %d open transactions; want none", st.BufferedBytes, st.OpenTxns)
			}
			if len(st.Partitions) != 2 {
				t.Fatalf("partitions: %+v", st.Partitions)
			}
			for i, ps := range st.Partitions {
				fi, _ := os.Stat(paths[i])
				if ps.Committed != fi.Size() || ps.Read != fi.Size() || ps.End != fi.Size() || ps.LastCommit.IsZero() {
					t.Errorf("partition %+v, want committed = read = end = %d", ps, fi.Size())
				}
			}
			if h.changes != res.Changes() {
				t.Errorf("hook saw %d changes, want %d", h.changes, res.Changes())
			}
			var upserted int64
			for _, c := range h.commits {
				if c.Err != nil || c.Took < 0 || c.Took > time.Minute {
					t.Errorf("commit info %+v", c)
				}
				upserted += int64(c.Upserted)
			}
			if int64(len(h.commits)) != st.Stats.Commits || upserted != st.Stats.Upserted {
				t.Errorf("hook saw %d commits, %d upserts; status says %d, %d", len(h.commits), upserted, st.Stats.Commits, st.Stats.Upserted)
			}
			if len(h.stopped) != 1 || h.stopped[0] != nil {
				t.Errorf("OnStop calls: %v", h.stopped)
			}
			if mode == "transaction" && st.Stats.Txns != int64(res.Txns) {
				t.Errorf("status txns %d, want %d", st.Stats.Txns, res.Txns)
			}
		})
	}
}

// sizedInserts writes n inserts into s.<table> (id, v) as txsink-json:
// ids and values of one width make every buffered row the same size (see
// bufferedRowBytes).
func sizedInserts(t *testing.T, table string, n int) (path string) {
	t.Helper()
	var lines []byte
	for i := range n {
		c := sizedInsert(table, i)
		var err error
		if lines, err = native.Append(lines, &c); err != nil {
			t.Fatal(err)
		}
	}
	path = filepath.Join(t.TempDir(), table+".jsonl")
	if err := os.WriteFile(path, lines, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func sizedInsert(table string, i int) changelog.Change {
	return changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Namespace: "s", Name: table},
		After: changelog.RowOf("id", int64(1000+i), "v", fmt.Sprintf("value-%04d", i))}
}

// bufferedRowBytes returns what one of sizedInserts' rows counts for in
// the buffer, which max-bytes bounds: the memory it takes, for the table
// as the target describes it.
func bufferedRowBytes(t *testing.T, db *testdb.DB, table string) int {
	t.Helper()
	ctx := context.Background()
	tgt, err := sink.Open(ctx, db.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	st, err := tgt.Describe(ctx, schema.Name{Name: table})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := reduce.NewTable(st, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	b := reduce.NewBuffer("sized")
	c := sizedInsert(table, 0)
	if err := b.Add(tbl, &c, time.Now()); err != nil {
		t.Fatal(err)
	}
	return int(b.Bytes())
}

// TestMaxBytesIsSharedWithTheCommit: while Run commits one unit it reads
// the next, and both are held at once, so max-bytes bounds the two
// together: a flush is cut at half of it.
func TestMaxBytesIsSharedWithTheCommit(t *testing.T) {
	db := testdb.SQLite(t)
	db.Exec(t, `CREATE TABLE sized (id INTEGER NOT NULL PRIMARY KEY, v TEXT NOT NULL)`)
	const n = 400
	path, size := sizedInserts(t, "sized", n), bufferedRowBytes(t, db, "sized")
	cfg := pipeline(db, config.Table{Source: "s.sized"})
	cfg.Source.Set("paths", []string{path})
	cfg.Sink.FlushMaxRows = 1 << 20
	const perFlush = 20
	cfg.Sink.FlushMaxBytes = int64(2 * perFlush * size)
	h := &recordingHook{}
	e := newEngine(t, cfg, engine.WithHooks(h))
	if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	bySize := 0
	for _, c := range h.commits {
		if c.Reason != "max-bytes" {
			continue
		}
		bySize++
		if c.Changes != perFlush {
			t.Errorf("a max-bytes commit of %d rows of %d bytes with max-bytes %d; want %d (half the bound)",
				c.Changes, size, cfg.Sink.FlushMaxBytes, perFlush)
		}
	}
	// The last flush may be the end of input's.
	if bySize < n/perFlush-1 {
		t.Errorf("%d commits cut by max-bytes, want %d or %d", bySize, n/perFlush-1, n/perFlush)
	}
	if got := query(t, db, "SELECT COUNT(*) FROM sized"); got != fmt.Sprint(n) {
		t.Errorf("%s rows, want %d", got, n)
	}
}

// TestCoalesceWhileTheTargetCommits holds the first commit while the
// loop reads on. With buffer-flush.coalesce the flush due meanwhile keeps
// taking records, so the rest goes in one more commit, or, bounded by
// max-bytes, in commits of half of it; without coalescing, reading waits
// at max-rows and every commit holds max-rows rows. Transaction mode does
// the same with finished transactions. The table ends exact every time.
func TestCoalesceWhileTheTargetCommits(t *testing.T) {
	const n, maxRows = 400, 10
	path := sizedInserts(t, "held", n)
	// The first commit at max-rows, then everything read while it was held.
	restAtOnce := func(sizes []int) string {
		if !slices.Equal(sizes, []int{maxRows, n - maxRows}) {
			return fmt.Sprintf("want a commit of %d rows, then one of the %d read meanwhile", maxRows, n-maxRows)
		}
		return ""
	}
	everyAtMaxRows := func(sizes []int) string {
		for _, s := range sizes {
			if s != maxRows {
				return fmt.Sprintf("want every commit at max-rows (%d)", maxRows)
			}
		}
		return ""
	}
	for _, tc := range []struct {
		name     string
		txn      bool // transaction mode, each record a transaction
		coalesce bool
		perFlush int // half of max-bytes, in records; 0: the default, larger than the input
		// holdUntil is how many changes the loop has taken when the
		// first commit, held until then, may go (0: at once).
		holdUntil int
		// check judges the commits' sizes in records.
		check func(sizes []int) string
	}{
		{"coalesce", false, true, 0, n, restAtOnce},
		{"wait", false, false, 0, 0, everyAtMaxRows},
		{"coalesce up to max-bytes", false, true, 100, maxRows + 100, func(sizes []int) string {
			const most = 100
			if len(sizes) < 2 || sizes[0] != maxRows || sizes[1] != most {
				return fmt.Sprintf("want a commit of %d rows, then one of half of max-bytes (%d records)", maxRows, most)
			}
			for _, s := range sizes[2:] {
				if s > most {
					return fmt.Sprintf("want no commit past half of max-bytes (%d records)", most)
				}
			}
			return ""
		}},
		{"transaction mode coalesce", true, true, 0, n, restAtOnce},
		{"transaction mode wait", true, false, 0, 0, everyAtMaxRows},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := testdb.SQLite(t)
			db.Exec(t, `CREATE TABLE held (id INTEGER NOT NULL PRIMARY KEY, v TEXT NOT NULL)`)
			cfg := pipeline(db, config.Table{Source: "s.held"})
			cfg.Source.Set("paths", []string{path})
			cfg.Sink.FlushMaxRows = maxRows
			cfg.Sink.FlushCoalesce = tc.coalesce
			if tc.txn {
				// Commits cut by max-rows and the end of input only.
				cfg.Sink.TxnEnabled = true
				cfg.Sink.FlushInterval = time.Hour
				cfg.Sink.TxnMiniSwitchInterval = 0
				cfg.Sink.TxnMinSwitchBytes = 0
			}
			if tc.perFlush > 0 {
				cfg.Sink.FlushMaxBytes = int64(2 * tc.perFlush * bufferedRowBytes(t, db, "held"))
			}
			h := &recordingHook{}
			taken := make(chan struct{})
			var changes atomic.Int64
			counter := changeCounter(func() {
				if changes.Add(1) == int64(tc.holdUntil) {
					close(taken)
				}
			})
			var first sync.Once
			e := newEngine(t, cfg, engine.WithHooks(h, counter), engine.WithBeforeCommitHook(func(*commit.Unit) error {
				if tc.holdUntil > 0 {
					first.Do(func() { <-taken })
				}
				return nil
			}))
			if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
				t.Fatal(err)
			}
			var sizes []int
			for _, c := range h.commits {
				sizes = append(sizes, c.Changes)
			}
			if msg := tc.check(sizes); msg != "" {
				t.Errorf("commits of %v records: %s", sizes, msg)
			}
			if got := query(t, db, "SELECT COUNT(*) FROM held"); got != fmt.Sprint(n) {
				t.Errorf("%s rows, want %d", got, n)
			}
		})
	}
}

// changeCounter is a hook calling f for every change the loop takes.
type changeCounter func()

func (f changeCounter) OnChange(*changelog.Change)        { f() }
func (f changeCounter) OnCommit(engine.CommitInfo)        {}
func (f changeCounter) OnRetry(int, time.Duration, error) {}
func (f changeCounter) OnStop(error)                      {}
