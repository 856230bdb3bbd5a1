package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
	"github.com/txsink/txsink/sink"
)

// TestZombieIsFenced starts a second instance of a pipeline while the
// first is running: the second claims the partitions, the first's next
// commit fails with ErrFenced having written nothing, and the second
// finishes with the exact final state — the append-only table proves no
// row was applied twice.
func TestZombieIsFenced(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 400, Partitions: 2, Seed: 12, Events: true})
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, workload.Schema(db.Dialect)...)
		cfg := workloadPipeline(db, writeWorkload(t, res))
		cfg.Name = "zombie"
		cfg.Sink.FlushMaxRows = 50

		var second *engine.Engine
		commitsAfterTakeover := 0
		first := newEngine(t, cfg, engine.WithCommitHook(func(*commit.Unit) {
			if second != nil {
				commitsAfterTakeover++
				return
			}
			// After the first instance's first commit, a second one starts
			// with the same pipeline name and files.
			var err error
			second, err = engine.New(context.Background(), cfg)
			if err != nil {
				t.Errorf("second instance: %v", err)
			}
		}))
		err := first.Run(context.Background(), engine.RunOptions{})
		if !errors.Is(err, sink.ErrFenced) {
			t.Fatalf("first instance: err = %v, want ErrFenced", err)
		}
		for _, w := range []string{"another instance", "zombie", "stale"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("fenced error %q lacks %q", err, w)
			}
		}
		if commitsAfterTakeover != 0 {
			t.Errorf("the fenced instance committed %d units after the takeover", commitsAfterTakeover)
		}
		if second == nil {
			t.Fatal("the second instance never started")
		}
		defer second.Close()
		if err := second.Run(context.Background(), engine.RunOptions{}); err != nil {
			t.Fatalf("second instance: %v", err)
		}
		checkFinal(t, db, res)
	})
}
