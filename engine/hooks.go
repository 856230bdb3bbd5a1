package engine

import (
	"time"

	"github.com/txsink/txsink/changelog"
)

// Hook is any value that implements one or more of the Hook* interfaces
// below; WithHooks installs them. Observability adapters (package metrics)
// are hooks, so the engine knows nothing of Prometheus.
//
// Hooks are called synchronously, in the order they were installed, and
// calls of one method never overlap: OnChange on the goroutine that adds
// changes (Run's loop), OnCommit and OnRetry on the goroutine that commits
// (while Run runs, its committer, so they may run at the same time as
// OnChange), OnStop once at the end. They must be quick and must not call
// back into the Engine (Status, which takes a lock of its own, is the
// exception).
type Hook any

// HookChange is told of every change read, before it is buffered: the
// change's kind, table and partition feed "events in" counters. The
// change is the hook's only during the call: its memory, rows and values
// included, is used again for later changes (see changelog.Arena), so a
// hook copies what it keeps.
type HookChange interface {
	OnChange(c *changelog.Change)
}

// HookCommit is told of every commit attempt of a unit, after it
// succeeded or finally failed.
type HookCommit interface {
	OnCommit(CommitInfo)
}

// CommitInfo describes one commit attempt.
type CommitInfo struct {
	// Reason says what triggered the commit ("max-rows", "interval",
	// "explicit", or in transaction mode "interval", "buffer-full", "flush").
	Reason string
	// Changes is the number of source changes the unit consumed.
	Changes int
	// Upserted, Deleted and Inserted count the rows written after reduction.
	Upserted, Deleted, Inserted int
	// Txns is the number of whole source transactions in the unit
	// (transaction mode; 0 otherwise).
	Txns int
	// Took is how long the commit took, retries included.
	Took time.Duration
	// Progress holds the positions the unit advanced to.
	Progress []changelog.Position
	// Err is nil when the unit was committed.
	Err error
}

// HookRetry is told of every transient target error that is retried.
type HookRetry interface {
	OnRetry(attempt int, wait time.Duration, err error)
}

// HookStop is told once, when Run ends: err is nil after a clean end.
type HookStop interface {
	OnStop(err error)
}

// WithHooks installs observability hooks (see Hook).
func WithHooks(hooks ...Hook) Option {
	return func(e *Engine) { e.hooks = append(e.hooks, hooks...) }
}

func (e *Engine) hookChange(c *changelog.Change) {
	for _, h := range e.hooks {
		if h, ok := h.(HookChange); ok {
			h.OnChange(c)
		}
	}
}

func (e *Engine) hookCommit(info CommitInfo) {
	for _, h := range e.hooks {
		if h, ok := h.(HookCommit); ok {
			h.OnCommit(info)
		}
	}
}

func (e *Engine) hookRetry(attempt int, wait time.Duration, err error) {
	for _, h := range e.hooks {
		if h, ok := h.(HookRetry); ok {
			h.OnRetry(attempt, wait, err)
		}
	}
}

func (e *Engine) hookStop(err error) {
	for _, h := range e.hooks {
		if h, ok := h.(HookStop); ok {
			h.OnStop(err)
		}
	}
}
