// Package fault carries the faults tests inject into a target's commits:
// a failure just before COMMIT, or a COMMIT whose answer is lost. They
// travel in the context of an Apply, so they reach no caller outside this
// module (the package is internal) and a target shared by several engines
// fails only the commits of the engine that asked.
//
// Production code never sets hooks; a target reads them with From, one
// context lookup per unit applied.
package fault

import (
	"context"

	"github.com/txsink/txsink/commit"
)

// Hooks are the faults of one Apply. A nil function injects nothing.
type Hooks struct {
	// BeforeCommit runs inside the unit's transaction, after all its
	// statements and before COMMIT; an error from it rolls the unit back
	// as a failed COMMIT would, and Apply returns it.
	BeforeCommit func(*commit.Unit) error
	// AfterCommit runs after a successful COMMIT; an error from it is
	// reported as a transient commit error, as when the connection breaks
	// after the server committed but before the client heard.
	AfterCommit func(*commit.Unit) error
}

type key struct{}

// With returns ctx carrying h, for the Apply calls made with it.
func With(ctx context.Context, h *Hooks) context.Context {
	return context.WithValue(ctx, key{}, h)
}

// From returns the hooks ctx carries, or nil.
func From(ctx context.Context) *Hooks {
	h, _ := ctx.Value(key{}).(*Hooks)
	return h
}
