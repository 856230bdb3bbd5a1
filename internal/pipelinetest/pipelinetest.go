// Package pipelinetest runs a pipeline in the background of a test, as
// txsink run does, for the tests of sources that stream until stopped:
// Start it, Stop it as SIGINT would (the run must end cleanly), or Wait
// for a run that ends by itself.
package pipelinetest

import (
	"context"
	"testing"
	"time"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
)

// Run is one run of a pipeline in the background.
type Run struct {
	cancel context.CancelFunc
	done   chan error
	e      *engine.Engine
}

// Start starts cfg's pipeline; the test's end stops it (Stop) if nothing
// did before.
func Start(t testing.TB, cfg *config.Config) *Run {
	t.Helper()
	e, err := engine.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("engine.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Run{cancel: cancel, done: make(chan error, 1), e: e}
	go func() { r.done <- e.Run(ctx, engine.RunOptions{}) }()
	t.Cleanup(func() { r.Stop(t) })
	return r
}

// Stop cancels the run (SIGINT) and waits for it; it fails the test if
// Run failed. A stopped run stops again as a no-op.
func (r *Run) Stop(t testing.TB) {
	t.Helper()
	if r.e == nil {
		return
	}
	r.cancel()
	if err := <-r.done; err != nil {
		t.Errorf("Run: %v", err)
	}
	r.e.Close()
	r.e = nil
}

// Engine is the run's engine, for its Status and Stats; nil once the run
// is stopped.
func (r *Run) Engine() *engine.Engine { return r.e }

// Wait waits for a run that ends by itself, and returns what Run did.
func (r *Run) Wait() error {
	err := <-r.done
	r.e.Close()
	r.e = nil
	return err
}

// Ended reports, without waiting, whether the run ended by itself, and
// what Run returned; a run that ended is closed, as by Wait.
func (r *Run) Ended() (bool, error) {
	select {
	case err := <-r.done:
		r.e.Close()
		r.e = nil
		return true, err
	default:
		return false, nil
	}
}

// Until looks at cond every 20ms until it holds, and fails the test if the
// run ends first or within passes, saying what did not happen (what) and
// what cond last said (why). cond may fail the test itself, on a look that
// shows something it must never see.
func (r *Run) Until(t testing.TB, within time.Duration, what string, cond func() (ok bool, why string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, why := cond()
		if ok {
			return
		}
		if ended, err := r.Ended(); ended {
			t.Fatalf("Run ended before %s: %v", what, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within %s: %s", what, within, why)
		}
		<-tick.C
	}
}
