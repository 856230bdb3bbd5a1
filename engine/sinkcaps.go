package engine

import (
	"context"
	"fmt"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
)

// The engine holds its target as a sink.Sink; this file is the one place
// that finds the optional capabilities (package sink) by type assertion.
// A capability the pipeline's configuration needs and the target lacks is
// an error saying so; one that only adds safety or speed is skipped.

// setupDeadLetters creates the dead-letter table, which bad-input:
// dead-letter needs.
func (e *Engine) setupDeadLetters(ctx context.Context) error {
	dl, ok := e.target.(sink.DeadLetterer)
	if !ok {
		return fmt.Errorf("bad-input: dead-letter: the target (%T) keeps no dead letters; use bad-input: fail", e.target)
	}
	return dl.SetupDeadLetters(ctx)
}

// storedMarks returns the marks stored with the pipeline's progress; a
// target that stores none has none, and a file replaced under its
// position is then not told apart.
//
// The places in the source's logs stored after the marks (see
// copies.go) become the engine's committed places (orders).
func (e *Engine) storedMarks(ctx context.Context) (map[string]string, error) {
	pk, ok := e.target.(sink.ProgressKeeper)
	if !ok {
		return map[string]string{}, nil
	}
	stored, err := pk.Marks(ctx, e.cfg.Name)
	if err != nil {
		return nil, err
	}
	marks := make(map[string]string, len(stored))
	orders := map[string][]changelog.Order{}
	for part, m := range stored {
		src, os := decodeMark(m)
		if src != "" {
			marks[part] = src
		}
		if len(os) > 0 {
			orders[part] = os
		}
	}
	e.progMu.Lock()
	e.orders = orders
	e.progMu.Unlock()
	return marks, nil
}

// rewindTarget moves a stream partition's stored position back to its
// start, which reading a stream needs.
func (e *Engine) rewindTarget(ctx context.Context, part string) error {
	pk, ok := e.target.(sink.ProgressKeeper)
	if !ok {
		return fmt.Errorf("rewind partition %s: the target (%T) cannot move stored progress, which a stream needs; read a file instead", part, e.target)
	}
	return pk.Rewind(ctx, e.cfg.Name, part)
}

// holdLocks takes the session locks of parts, when the target has them.
func (e *Engine) holdLocks(ctx context.Context, parts []string) (busy []string, err error) {
	if lk, ok := e.target.(sink.Locker); ok {
		return lk.Hold(ctx, e.cfg.Name, parts)
	}
	return nil, nil
}

// releaseLocks gives up the session locks of parts, when the target has
// them.
func (e *Engine) releaseLocks(ctx context.Context, parts []string) error {
	if lk, ok := e.target.(sink.Locker); ok {
		return lk.Release(ctx, e.cfg.Name, parts)
	}
	return nil
}

// shapeChanged reports whether tbl was altered since it was described;
// false when the target cannot tell.
func (e *Engine) shapeChanged(ctx context.Context, tbl *schema.Table) (bool, error) {
	if sc, ok := e.target.(sink.ShapeChecker); ok {
		return sc.ShapeChanged(ctx, tbl)
	}
	return false, nil
}

// describe reads a target table, through the caller's connection when
// WithCatalog set one.
func (e *Engine) describe(ctx context.Context, name schema.Name) (*schema.Table, error) {
	if e.catalog == nil {
		return e.target.Describe(ctx, name)
	}
	c, ok := e.target.(sink.Catalog)
	if !ok {
		return nil, fmt.Errorf("describe %s: the target (%T) has no SQL catalog to read through the connection given to WithCatalog", name, e.target)
	}
	return c.DescribeOn(ctx, e.catalog, name)
}

// streamer returns the target as a sink.Streamer, which transaction
// mode's autonomous flush needs; nil when it is none (each unit is then
// loaded at its commit, which only costs time).
func (e *Engine) streamer() sink.Streamer {
	s, _ := e.target.(sink.Streamer)
	return s
}
