package engine

import (
	"errors"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/internal/fault"
)

// The options below inject faults for engine's own tests; they are no
// part of the engine's API.

// faultHooks returns e's fault hooks, creating them.
func (e *Engine) faultHooks() *fault.Hooks {
	if e.faults == nil {
		e.faults = &fault.Hooks{}
	}
	return e.faults
}

// WithLostCommitAck makes the target report a transient error after each
// COMMIT for which f returns true, although the COMMIT succeeded — as when
// a connection breaks before the client hears the server's answer. Tests
// use it to prove such a unit is not applied twice.
func WithLostCommitAck(f func(*commit.Unit) bool) Option {
	return func(e *Engine) {
		e.faultHooks().AfterCommit = func(u *commit.Unit) error {
			if f(u) {
				return errors.New("connection lost before the COMMIT's answer (simulated)")
			}
			return nil
		}
	}
}

// WithCommitHook calls f after every successful commit, with the unit just
// committed. Tests use it to stop a pipeline between commits.
func WithCommitHook(f func(*commit.Unit)) Option { return func(e *Engine) { e.onCommit = f } }

// WithBeforeCommitHook calls f inside every unit's target transaction,
// after all its statements and before COMMIT; an error from f rolls the
// unit back as a failed COMMIT would (tests use it to stop a pipeline
// inside a commit).
func WithBeforeCommitHook(f func(*commit.Unit) error) Option {
	return func(e *Engine) { e.faultHooks().BeforeCommit = f }
}
