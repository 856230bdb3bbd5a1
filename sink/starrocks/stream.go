package starrocks

// Transaction mode's autonomous flush (sink.Streamer): the engine hands
// the target each frozen chunk of whole source transactions as it
// freezes, and the target loads it into a multi-table transaction kept
// open for the pipeline's next unit, under the label that unit commits
// with, while the engine reads on. The unit's Apply then loads only what
// the open transaction lacks, and the progress, and commits.

import (
	"context"
	"time"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/sink"
)

var _ sink.Streamer = (*Target)(nil)

// shared is the transaction kept open for a pipeline's next unit.
type shared struct {
	x *Txn
	// parts are the parts loaded into x, in order.
	parts []*commit.Unit
	// failed is the error a part met: x is rolled back, and the unit's
	// Apply loads every part again in a new transaction.
	failed error
}

// Stream implements sink.Streamer: it loads part, as Apply loads a unit's
// rows (one load per table and group at a time, a load refused for
// TXN_IN_PROCESSING retried), into the transaction open for the
// pipeline's next unit, beginning it under that unit's label when none is
// open. Nothing of it is visible before that unit's Apply commits. After
// a failed part the transaction is rolled back and the parts after it
// are not loaded (Stream returns the failure again): the unit's Apply
// starts over in a new transaction.
//
// Stream is one of the calls the engine never runs beside Claim, Apply or
// Committed.
func (t *Target) Stream(ctx context.Context, part *commit.Unit) error {
	sh := t.open[part.Pipeline]
	if sh == nil {
		sh = &shared{}
		t.open[part.Pipeline] = sh
	}
	if sh.failed != nil {
		return sh.failed
	}
	if sh.x == nil {
		x, err := t.begin(ctx, part.Pipeline)
		if err != nil {
			sh.failed = err
			return err
		}
		sh.x = x
	}
	if err := t.loadPart(ctx, sh.x, sh.parts, part); err != nil {
		_ = sh.x.Rollback(context.WithoutCancel(ctx))
		sh.x, sh.parts, sh.failed = nil, nil, err
		return err
	}
	sh.parts = append(sh.parts, part)
	return nil
}

// StreamTimeout implements sink.Streamer: the timeout every transaction's
// begin sends (the label's timeout), after which StarRocks aborts it.
func (t *Target) StreamTimeout() time.Duration { return t.client.cfg.TxnTimeout }

// takeShared returns the transaction Stream kept open for u's pipeline
// when it holds the first parts of u and nothing else, with how many of
// them it holds; otherwise it rolls back any open one and returns nil.
// The pipeline has no open transaction after it.
func (t *Target) takeShared(ctx context.Context, u *commit.Unit) (*Txn, int) {
	sh := t.open[u.Pipeline]
	delete(t.open, u.Pipeline)
	if sh == nil || sh.x == nil {
		return nil, 0
	}
	ok := sh.failed == nil && len(sh.parts) <= len(u.Parts)
	for i := 0; ok && i < len(sh.parts); i++ {
		ok = sh.parts[i] == u.Parts[i]
	}
	if !ok {
		_ = sh.x.Rollback(context.WithoutCancel(ctx))
		return nil, 0
	}
	return sh.x, len(sh.parts)
}

// rollbackShared rolls back every transaction Stream left open.
func (t *Target) rollbackShared(ctx context.Context) {
	for p, sh := range t.open {
		if sh.x != nil {
			_ = sh.x.Rollback(ctx)
		}
		delete(t.open, p)
	}
}
