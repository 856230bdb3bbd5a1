package postgres_test

import (
	"context"
	"database/sql"
	"github.com/txsink/txsink/internal/pipelinetest"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
	txsource "github.com/txsink/txsink/source"
	"github.com/txsink/txsink/source/postgres"
)

// stopAfter is an engine hook that cancels the run once the target
// committed a position of at least offset.
type stopAfter struct {
	offset int64
	cancel context.CancelFunc
}

func (h *stopAfter) OnCommit(info engine.CommitInfo) {
	for _, p := range info.Progress {
		if info.Err == nil && p.Offset >= h.offset {
			h.cancel()
		}
	}
}

// storedMark returns the mark the target stores with the slot's position.
func storedMark(t *testing.T, dst *testdb.DB, slot string) string {
	t.Helper()
	var m sql.NullString
	q := "SELECT position_mark FROM txsink_progress WHERE source_partition = '" + postgres.Partition(slot) + "'"
	if err := dst.SQL.QueryRow(q).Scan(&m); err != nil {
		t.Fatal(err)
	}
	return m.String
}

// converged waits until the target shows the source's rows, and then
// that no partial transaction is visible; unlike caughtUp it does not look
// at the invariant before (a snapshot being copied breaks it).
func converged(t *testing.T, r *pipelinetest.Run, src, dst *testdb.DB) {
	t.Helper()
	want := dump(t, src)
	deadline := time.Now().Add(2 * time.Minute)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	got := dump(t, dst)
	for got != want {
		if time.Now().After(deadline) {
			t.Fatalf("the target did not converge to the source within 2 minutes:\n%s", diff(want, got))
		}
		if ended, err := r.Ended(); ended {
			t.Fatalf("Run ended before the target converged: %v", err)
		}
		<-tick.C
		got = dump(t, dst)
	}
	var n int
	if err := dst.SQL.QueryRow(partial).Scan(&n); err != nil || n != 0 {
		t.Fatalf("after converging, %d orders do not match their items (%v)", n, err)
	}
}

// TestSnapshotResume stops a run in the middle of its chunked initial
// snapshot while the workload goes on, and starts it again (more than
// once): the copy resumes from each table's last committed chunk (the
// stored mark shows a table copied in part; the rows committed stay),
// as of a new consistent point, and the target ends as the source, row
// for row (the append-only events would show a change applied twice or
// lost), with no partial transaction once converged. On SQLite and one
// server.
func TestSnapshotResume(t *testing.T) {
	src := source(t)
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			dst := testdb.Open(t, dialect)
			dst.Exec(t, targetTables[dialect]...)
			cfg := pipeline("resume_"+dialect, src, dst)
			slot := postgres.DefaultSlot(cfg.Name)
			t.Cleanup(func() { src.SQL.Exec("SELECT pg_drop_replication_slot($1)", slot) })
			src.Exec(t, "TRUNCATE orders, items, events, kvfull, kvdef")
			t.Cleanup(func() { src.Exec(t, "DELETE FROM items WHERE order_id > 100000") })
			workloadTx(t, src.SQL, 0, 200, 3, nil)
			// Items of orders the workload never has: more chunks than
			// the pipeline's buffers hold, so that a stop lands inside
			// the copy.
			src.Exec(t, "INSERT INTO items SELECT 100000 + g, 0, 1 FROM generate_series(1, 20000) g")
			cfg.Source.Set("snapshot", postgres.SnapshotInitial)
			cfg.Source.Set("snapshot.chunk-rows", 50)
			cfg.Source.Set("snapshot.parallel", 2)
			cfg.Sink.FlushMaxRows = 60

			// The workload goes on during every run and between them.
			var wg sync.WaitGroup
			stopLoad := make(chan struct{})
			next := 200
			loading := false
			load := func() {
				loading = true
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stopLoad:
							return
						default:
						}
						workloadTx(t, src.SQL, next, 5, uint64(next), nil)
						next += 5
					}
				}()
			}
			pause := func() {
				if loading {
					close(stopLoad)
					wg.Wait()
					stopLoad = make(chan struct{})
					loading = false
				}
			}
			t.Cleanup(pause)
			committed := int64(0)
			for round := 1; round <= 2; round++ {
				load()
				ctx, cancel := context.WithCancel(context.Background())
				e, err := engine.New(ctx, cfg, engine.WithHooks(&stopAfter{offset: committed + 5, cancel: cancel}))
				if err != nil {
					t.Fatal(err)
				}
				err = e.Run(ctx, engine.RunOptions{})
				e.Close()
				cancel()
				if err != nil {
					t.Fatalf("round %d: Run: %v", round, err)
				}
				pause()
				workloadTx(t, src.SQL, next, 10, uint64(next), nil)
				next += 10
				mark := storedMark(t, dst, slot)
				if mid := postgres.PartlyCopied(mark); len(mid) == 0 {
					t.Fatalf("round %d: stopped with no table copied in part; the stored mark is %q", round, mark)
				}
				p := progress(t, dst, slot)
				if p <= committed {
					t.Fatalf("round %d: the stored position %d did not move past %d: the resumed snapshot started from zero", round, p, committed)
				}
				committed = p
			}
			// The last run resumes, finishes the copy and streams past the
			// windows while the workload goes on; then the target
			// converges to the source.
			load()
			r := pipelinetest.Start(t, cfg)
			deadline := time.Now().Add(2 * time.Minute)
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for storedMark(t, dst, slot) != "" {
				if time.Now().After(deadline) {
					t.Fatalf("the stream did not pass the resumed snapshot's windows within 2 minutes; the mark is %q", storedMark(t, dst, slot))
				}
				<-tick.C
			}
			pause()
			converged(t, r, src, dst)
			workloadTx(t, src.SQL, next, 20, uint64(next), nil)
			caughtUp(t, r, src, dst)
			// The slot's lag is in the status: the WAL since what the
			// target confirmed, known once the server reported its end.
			// The server reports its end in keepalives, so wait for it.
			r.Until(t, time.Minute, "the status gives the slot's lag", func() (bool, string) {
				for _, p := range r.Engine().Status().Partitions {
					if p.Name == postgres.Partition(slot) && p.SlotLagBytes != nil && *p.SlotLagBytes >= 0 {
						return true, ""
					}
				}
				return false, "the status gives no slot lag for " + postgres.Partition(slot)
			})
			r.Stop(t)
			if m := storedMark(t, dst, slot); m != "" {
				t.Errorf("after the windows passed, the target still stores the snapshot's mark %q", m)
			}
		})
	}
}

// TestSnapshotKeys checks the snapshot keys' bounds.
func TestSnapshotKeys(t *testing.T) {
	cases := []struct {
		key  string
		val  int
		want string
	}{
		{"snapshot.parallel", 65, "snapshot.parallel 65"},
		{"snapshot.chunk-rows", -1, "snapshot.chunk-rows -1"},
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			cfg := config.Default()
			cfg.Name = "keys"
			cfg.Source = config.Source{Type: postgres.Type, Format: postgres.Format}
			cfg.Source.Set("url", "postgres://u@h/db")
			cfg.Source.Set("tables", []string{"public.t"})
			cfg.Source.Set(c.key, c.val)
			_, err := postgres.Driver{}.Open(cfg.Source.Settings(), txsource.Env{Log: slog.New(slog.DiscardHandler)})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Open with %s: %d = %v, want an error naming %q", c.key, c.val, err, c.want)
			}
		})
	}
}
