package engine

// Transaction mode's autonomous flush (seed 001's): into a target that
// streams (sink.Streamer), each frozen chunk of whole source transactions
// is handed to the target as it freezes — its reduction a part
// (commit.Unit.Parts) loaded into the transaction the target keeps open
// for the next plan — while the loop reads on and later chunks fill. The
// plan's unit, cut at the interval on a clean boundary as always, then
// carries those parts, the rest of its chunks merged, and its progress,
// and its Apply commits them together. A transaction kept open for 80% of
// the target's timeout is committed at the next clean boundary even
// before the interval (the seed's recycle), so the server never aborts
// it for its age.

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/sink"
)

// recycleShare is the part of the target's timeout a transaction is kept
// open for at most (seed 001: 80%, 480 s of the default 600 s).
const recycleShare = 0.8

// streaming is the loop's side of the autonomous flush.
type streaming struct {
	to sink.Streamer
	// parts are the chunks' reductions handed to the target for the next
	// plan, in the order they were handed over: the next unit's Parts.
	parts []*commit.Unit
	// taken counts the frozen chunks whose reductions were taken since
	// the last plan was cut: while it is the machine's count of frozen
	// chunks, none is left to hand over.
	taken int
	// since is when the first of parts was handed over: the target's
	// open transaction began no earlier.
	since time.Time
	// recycle is how long a transaction may be kept open.
	recycle time.Duration
	// failed is set, on the committer's goroutine, when the target
	// refused a part: no more are handed over until the next plan, whose
	// Apply loads them all again.
	failed atomic.Bool
}

// newStreaming returns the autonomous flush for the engine's target, or
// nil when the target does not stream or when the loop could not check
// every key's partition without merging a plan's chunks: with the memory
// of keys' partitions off (sink.key-partitions.remember: 0) and several
// partitions, it is the merge of a plan's chunks that finds a key written
// by two of them.
func (e *Engine) newStreaming() *streaming {
	to := e.streamer()
	if to == nil || e.keys == nil && len(e.partitions()) != 1 {
		return nil
	}
	return &streaming{to: to, recycle: time.Duration(float64(to.StreamTimeout()) * recycleShare)}
}

// streamNext hands the next frozen chunk the target has not been given
// to the committer, which loads it into the target's open transaction,
// when the committer is idle: one part is loaded at a time, never beside
// a commit, so the target never gets two loads of one table at once, and
// the loop never waits for a load.
func (l *txnLoop) streamNext() error {
	st := l.st
	if st == nil || l.e.async == nil || st.failed.Load() {
		return nil
	}
	for !l.e.async.Busy() && st.taken < l.m.Frozen() {
		var next *reduced
		l.m.EachFrozen(func(r *reduced) bool {
			if r == nil || r.part != nil {
				return true
			}
			if r.err == nil {
				next = r
			}
			// A chunk whose reduction failed fails the plan at its cut:
			// nothing more is loaded for it.
			return false
		})
		if next == nil {
			return nil
		}
		st.taken++
		part := next.buf.Take()
		if part == nil {
			part = &commit.Unit{Pipeline: l.e.cfg.Name}
		}
		next.part = part
		next.progress, part.Progress = part.Progress, nil
		if len(part.Batches) == 0 && len(part.DeadLetters) == 0 {
			continue // its progress goes with the plan; nothing to load
		}
		if len(st.parts) == 0 {
			st.since = l.e.now()
		}
		st.parts = append(st.parts, part)
		if err := l.e.async.submit(pendingUnit{u: part, stream: st, done: l.wakeUp}); err != nil {
			return err
		}
	}
	return nil
}

// streamPart loads p's part into the target's open transaction, on the
// committer's goroutine. Its failure is not the unit's: the unit's Apply
// loads every part again.
func (e *Engine) streamPart(ctx context.Context, p pendingUnit) {
	if err := p.stream.to.Stream(ctx, p.u); err != nil {
		p.stream.failed.Store(true)
		e.log.Info("loading a part of the next commit ahead of it failed; the commit loads it again", "err", err)
	}
}

// recycleDue reports whether the target's open transaction is as old as
// it may be kept: the next plan is cut at once, at the clean boundary
// every frozen chunk ends on.
func (l *txnLoop) recycleDue(now time.Time) bool {
	st := l.st
	return st != nil && len(st.parts) > 0 && !now.Before(st.since.Add(st.recycle))
}

// recycleDeadline adds to the machine's next deadline the instant the
// open transaction is due for its recycle.
func (l *txnLoop) recycleDeadline(d time.Time, ok bool) (time.Time, bool) {
	st := l.st
	if st == nil || len(st.parts) == 0 {
		return d, ok
	}
	if at := st.since.Add(st.recycle); !ok || at.Before(d) {
		return at, true
	}
	return d, ok
}

// withParts makes u, the merge of a plan's chunks the target was not
// given (nil: none, or none with rows), the plan's unit: the parts the
// target was given go first, and the unit's progress, changes and ignored
// deletes count the streamed chunks' too. streamed holds those chunks'
// reductions as taken, in plan order.
func (l *txnLoop) withParts(u *commit.Unit, streamed []*commit.Unit, progress [][]changelog.Position) *commit.Unit {
	if len(streamed) == 0 {
		return u
	}
	if u == nil {
		u = &commit.Unit{Pipeline: l.e.cfg.Name}
	}
	if st := l.st; st != nil {
		u.Parts, st.parts = st.parts, nil
		st.failed.Store(false)
	}
	// Per partition the position of its last chunk: a partition's
	// streamed chunks come before its merged ones.
	at := map[string]changelog.Position{}
	var order []string
	add := func(ps []changelog.Position) {
		for _, p := range ps {
			if _, ok := at[p.Partition]; !ok {
				order = append(order, p.Partition)
			}
			at[p.Partition] = p
		}
	}
	// The places in the source's logs too (see copies.go), in the same
	// order: a later one, or a new start, after the earlier.
	var orders []commit.Order
	for i, part := range streamed {
		u.Changes += part.Changes
		u.IgnoredDeletes += part.IgnoredDeletes
		add(progress[i])
		orders = append(orders, part.Orders...)
	}
	if len(orders) > 0 {
		u.Orders = append(orders, u.Orders...)
	}
	add(u.Progress)
	u.Progress = u.Progress[:0]
	for _, p := range order {
		u.Progress = append(u.Progress, at[p])
	}
	return u
}

// wakeUp wakes Run, so that the loop hands the target its next part once
// one is loaded, without waiting for a record.
func (l *txnLoop) wakeUp() {
	select {
	case l.wakeCh <- struct{}{}:
	default: // a wake-up is pending already
	}
}
