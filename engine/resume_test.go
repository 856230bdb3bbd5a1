package engine_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/format/native"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
)

var errCrash = errors.New("simulated crash inside the commit")

// writeWorkload writes each partition of res as a txsink-json file and
// returns their paths.
func writeWorkload(t testing.TB, res *workload.Result) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for p, changes := range res.Partitions {
		path := filepath.Join(dir, fmt.Sprintf("p%d.jsonl", p))
		writeChangeFile(t, path, changes)
		paths = append(paths, path)
	}
	return paths
}

// writeChangeFile writes changes to path as txsink-json, a line each.
func writeChangeFile(t testing.TB, path string, changes []changelog.Change) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	var line []byte
	for i := range changes {
		line, err = native.Append(line[:0], &changes[i])
		if err != nil {
			t.Fatal(err)
		}
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func workloadPipeline(db *testdb.DB, paths []string) *config.Config {
	cfg := pipeline(db,
		config.Table{Source: "shop.orders"},
		config.Table{Source: "shop.order_items", PrimaryKey: []string{"order_id", "line_no"}},
		config.Table{Source: "shop.order_events", AppendOnly: true})
	cfg.Name = "resume"
	// Each file is a partition of its own, read concurrently.
	var parts [][]string
	for _, p := range paths {
		parts = append(parts, []string{p})
	}
	if parts != nil {
		cfg.Source.Set("partitions", parts)
	}
	return cfg
}

// checkFinal compares the target with the workload's final state; the
// append-only table proves nothing was applied twice, since its inserts
// are not idempotent.
func checkFinal(t *testing.T, db *testdb.DB, res *workload.Result) {
	t.Helper()
	for table, key := range map[string][]string{"orders": {"id"}, "order_items": {"order_id", "line_no"}} {
		got, err := workload.ReadState(context.Background(), db.SQL, table, key)
		if err != nil {
			t.Fatal(err)
		}
		if d := workload.Diff(table, workload.NormalizeState(res.Final[table]), got, 10); d != "" {
			t.Errorf("final state differs:\n%s", d)
		}
	}
	if got := query(t, db, "SELECT COUNT(*) FROM order_events"); got != fmt.Sprint(res.Events) {
		t.Errorf("order_events has %s rows, want exactly %d (a replay would duplicate them)", got, res.Events)
	}
}

// TestResume stops a pipeline again and again — between commits (as on
// SIGINT) and inside a commit, after its statements and before COMMIT (as
// on a crash) — and restarts it each time. The final state must be exact,
// nothing applied twice, and progress must never go backwards.
func TestResume(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 300, Partitions: 2, Seed: 7, Events: true})
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, workload.Schema(db.Dialect)...)
		paths := writeWorkload(t, res)
		cfg := workloadPipeline(db, paths)
		cfg.Sink.FlushMaxRows = 37
		cfg.Sink.FlushCoalesce = false // commits at every 37 rows, many to stop at
		rng := rand.New(rand.NewPCG(11, 13))
		seen := map[string]int64{}
		checkMonotonic := func(u *commit.Unit) {
			for _, p := range u.Progress {
				if p.Offset < seen[p.Partition] {
					t.Errorf("progress of %s went backwards: %d after %d", p.Partition, p.Offset, seen[p.Partition])
				}
				seen[p.Partition] = p.Offset
			}
		}
		var crashes, interrupts int
		for run := 0; ; run++ {
			stopAt := 1 + rng.IntN(6)
			inside := rng.IntN(2) == 0
			final := run >= 30
			ctx, cancel := context.WithCancel(context.Background())
			commits := 0
			e, err := engine.New(context.Background(), cfg,
				engine.WithCommitHook(func(u *commit.Unit) {
					checkMonotonic(u)
					commits++
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
			switch {
			case errors.Is(err, errCrash):
				crashes++
			case err != nil:
				t.Fatalf("run %d: %v", run, err)
			case final:
				if crashes == 0 || interrupts == 0 {
					t.Fatalf("the test stopped nothing: %d crashes, %d interrupts", crashes, interrupts)
				}
				checkFinal(t, db, res)
				for _, p := range paths {
					fi, _ := os.Stat(p)
					if seen[p] != fi.Size() {
						t.Errorf("progress of %s = %d, want the file's size %d; table: %s", p, seen[p], fi.Size(), query(t, db, "SELECT source_partition, position, seq FROM txsink_progress"))
					}
				}
				return
			default:
				interrupts++
			}
		}
	})
}

// TestRunTwiceAppliesNothing runs a finished pipeline again: it reads
// nothing new and commits nothing.
func TestRunTwiceAppliesNothing(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 50, Partitions: 2, Seed: 3, Events: true})
	db := testdb.SQLite(t)
	db.Exec(t, workload.Schema("sqlite")...)
	cfg := workloadPipeline(db, writeWorkload(t, res))
	for i := 0; i < 2; i++ {
		e := newEngine(t, cfg)
		if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		st := e.Stats()
		if i == 1 && (st.Commits != 0 || len(st.Events) != 0) {
			t.Errorf("second run committed %d units from %v events", st.Commits, st.Events)
		}
	}
	checkFinal(t, db, res)
}
