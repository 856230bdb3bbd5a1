package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/clock/clocktest"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
)

// A phased test cuts its changelog into commits of its choosing, each
// phase one unit, and states what it expects once for plain and
// transaction mode: in plain mode a feeder adds each change to one engine
// and flushes after each phase; in transaction mode each phase is a run of
// the pipeline over the changelog up to the phase's end, which resumes
// after the phases before and commits what it read at the end of its
// input, in one unit (its clock does not move, so no interval cuts one
// earlier).

// modes are the pipeline modes a phased test runs in.
var modes = []string{"plain", "transaction"}

// phase is one commit of a phased test: source transactions, applied with
// the clock at at (the time a soft delete stamps).
type phase struct {
	at   time.Time
	txns [][]changelog.Change
}

// phaseCounts is what one phase's commits counted.
type phaseCounts struct {
	commits, refused, ignored int64
}

func countsOf(st engine.Stats) phaseCounts {
	return phaseCounts{commits: st.Commits, refused: st.GuardRefused, ignored: st.DeletesIgnored}
}

func (a phaseCounts) minus(b phaseCounts) phaseCounts {
	return phaseCounts{commits: a.commits - b.commits, refused: a.refused - b.refused, ignored: a.ignored - b.ignored}
}

// change returns a change of kind to table, spelt "namespace.name".
func change(kind changelog.Kind, table string, before, after changelog.Row) changelog.Change {
	ns, name, _ := strings.Cut(table, ".")
	return changelog.Change{Kind: kind, Table: changelog.Table{Namespace: ns, Name: name}, Before: before, After: after}
}

// applyPhases commits phases into a pipeline of cfg in mode and returns
// what each phase counted. cfg.Name must be the test's own: the progress
// of an earlier pipeline of that name would skip the changes.
func applyPhases(t *testing.T, cfg *config.Config, mode string, phases []phase) []phaseCounts {
	t.Helper()
	// A retry waits on the clock, which does not move: an error stops the
	// phase at once instead.
	cfg.Sink.MaxRetries = 0
	if mode == "plain" {
		return feedPhases(t, cfg, phases)
	}
	return runPhases(t, cfg, phases)
}

// openEngine opens cfg's engine; the caller closes it.
func openEngine(t *testing.T, cfg *config.Config, opts ...engine.Option) *engine.Engine {
	t.Helper()
	e, err := engine.New(context.Background(), cfg, opts...)
	if err != nil {
		t.Fatalf("engine.New: %v", err)
	}
	return e
}

// feedPhases is applyPhases in plain mode: one engine, a flush per phase.
func feedPhases(t *testing.T, cfg *config.Config, phases []phase) []phaseCounts {
	t.Helper()
	clk := clocktest.New(phases[0].at)
	e := openEngine(t, cfg, engine.WithClock(clk))
	defer e.Close()
	f := &feeder{t: t, e: e}
	var out []phaseCounts
	before := countsOf(e.Stats())
	for _, p := range phases {
		clk.Set(p.at)
		for _, txn := range p.txns {
			for i := range txn {
				f.mustChange(txn[i])
			}
		}
		f.flush()
		after := countsOf(e.Stats())
		out = append(out, after.minus(before))
		before = after
	}
	return out
}

// runPhases is applyPhases in transaction mode: a run per phase, each
// over the changelog so far; it fails the test unless each run commits
// its phase in one unit.
func runPhases(t *testing.T, cfg *config.Config, phases []phase) []phaseCounts {
	t.Helper()
	c := *cfg
	c.Sink.TxnEnabled = true
	c.Sink.FlushInterval = time.Hour
	c.Sink.TxnMiniSwitchInterval = time.Hour
	path := filepath.Join(t.TempDir(), "phases.jsonl")
	c.Source.Set("paths", []string{path})
	var all []changelog.Change
	var out []phaseCounts
	n := 0
	for i, p := range phases {
		for _, txn := range p.txns {
			all, _, n = endTxn(all, slices.Clone(txn), n)
		}
		writeChangeFile(t, path, all)
		e := openEngine(t, &c, engine.WithClock(clocktest.New(p.at)))
		err := e.Run(context.Background(), engine.RunOptions{})
		counts := countsOf(e.Stats())
		e.Close()
		if err != nil {
			t.Fatalf("phase %d: %v", i+1, err)
		}
		if counts.commits != 1 {
			t.Fatalf("phase %d committed %d units, want 1", i+1, counts.commits)
		}
		out = append(out, counts)
	}
	return out
}

// checkCounts compares what each phase counted with want, the commits
// left out.
func checkCounts(t *testing.T, got []phaseCounts, want []phaseCounts) {
	t.Helper()
	for i := range got {
		got[i].commits = 0
	}
	if !slices.Equal(got, want) {
		t.Errorf("per phase {commits refused ignored}: got %v, want %v", got, want)
	}
}

// phaseName is a pipeline name of its own for a test's mode and case.
func phaseName(mode, name string) string {
	return fmt.Sprintf("%s-%s", mode, name)
}
