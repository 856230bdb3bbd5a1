package engine

import (
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/observe"
)

// The hooks a pipeline calls, and what it reports, are package observe's,
// so that observers (metrics, statushttp) need not import the engine; the
// engine's names for them are aliases.
type (
	// Hook is observe.Hook.
	Hook = observe.Hook
	// HookChange is observe.HookChange.
	HookChange = observe.HookChange
	// HookCommit is observe.HookCommit.
	HookCommit = observe.HookCommit
	// CommitInfo is observe.CommitInfo.
	CommitInfo = observe.CommitInfo
	// HookRetry is observe.HookRetry.
	HookRetry = observe.HookRetry
	// HookStop is observe.HookStop.
	HookStop = observe.HookStop
	// State is observe.State.
	State = observe.State
	// Status is observe.Status.
	Status = observe.Status
	// PartitionStatus is observe.PartitionStatus.
	PartitionStatus = observe.PartitionStatus
	// StatsSnapshot is observe.StatsSnapshot.
	StatsSnapshot = observe.StatsSnapshot
	// OpenTxn is observe.OpenTxn.
	OpenTxn = observe.OpenTxn
)

// The pipeline states Status reports (see observe.State).
const (
	StateStarting = observe.StateStarting
	StateRunning  = observe.StateRunning
	StateDegraded = observe.StateDegraded
	StateStopping = observe.StateStopping
	StateStopped  = observe.StateStopped
	StateFailed   = observe.StateFailed
)

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
