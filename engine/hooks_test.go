package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/format/native"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
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

// TestMaxBytesIsSharedWithTheCommit: while Run commits one unit it reads
// the next, and both are held at once, so max-bytes bounds the two
// together: a flush is cut at half of it.
func TestMaxBytesIsSharedWithTheCommit(t *testing.T) {
	db := testdb.SQLite(t)
	db.Exec(t, `CREATE TABLE sized (id INTEGER NOT NULL PRIMARY KEY, v TEXT NOT NULL)`)
	const n = 400
	var lines []byte
	size := 0
	for i := range n {
		// Ids and values of one width: every record has the same size.
		c := changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Namespace: "s", Name: "sized"},
			After: changelog.RowOf("id", int64(1000+i), "v", fmt.Sprintf("value-%04d", i))}
		var err error
		start := len(lines)
		if lines, err = native.Append(lines, &c); err != nil {
			t.Fatal(err)
		}
		size = len(lines) - start
	}
	path := filepath.Join(t.TempDir(), "sized.jsonl")
	if err := os.WriteFile(path, lines, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := pipeline(db, config.Table{Source: "s.sized"})
	cfg.Source.Paths = []string{path}
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
		// A record's size leaves out its newline: the flush that passes
		// half the bound may take one record more.
		if c.Changes < perFlush || c.Changes > perFlush+1 {
			t.Errorf("a max-bytes commit of %d records of about %d bytes with max-bytes %d; want %d (half the bound)",
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
