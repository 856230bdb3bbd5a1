package engine

import (
	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/txn"
)

// A plan's unit: the merge of its chunks' reductions (and, into a target
// that streams, the parts taken from them; see autoflush.go).

// unit merges the reductions of a plan's chunks, in the plan's order,
// into the unit that applies them, with the plan's progress, in one
// target transaction, and returns it with the number of source
// transactions it commits (nil: nothing to apply). A chunk whose
// reduction met an error fails the plan with it.
func (l *txnLoop) unit(plan *txn.Plan[*reduced]) (*commit.Unit, int, error) {
	// The arenas of the transactions the plan holds go first: a large
	// transaction's decoded changes, reduced as it ended, would otherwise
	// live on while its reduction is merged and committed, until the next
	// job or tick released them.
	l.release()
	if l.merged == nil {
		l.merged = reduce.NewBuffer(l.e.cfg.Name)
		// Each chunk's keys met the memory as they were reduced.
		l.merged.ConfinePartitions(nil)
	}
	if l.st != nil {
		// The plan takes every frozen chunk.
		l.st.taken = 0
	}
	skipped := 0
	var streamed []*commit.Unit
	var streamedAt [][]changelog.Position
	for _, ck := range plan.Chunks {
		r := ck.Value
		if r == nil {
			continue
		}
		if r.err != nil {
			return nil, 0, r.err
		}
		skipped += r.skipped
		if r.part != nil {
			// Taken for the target that streams: a part of the unit.
			streamed, streamedAt = append(streamed, r.part), append(streamedAt, r.progress)
			l.recycle(r)
			continue
		}
		if err := l.merged.Merge(r.buf); err != nil {
			// A key of two partitions in one plan, the memory off (or
			// past its reach): the chunks were reduced apart.
			return nil, 0, err
		}
		l.recycle(r)
	}
	if skipped > 0 {
		l.e.mu.Lock()
		l.e.stats.Skipped += int64(skipped)
		l.e.mu.Unlock()
	}
	u := l.withParts(l.merged.Take(), streamed, streamedAt)
	if u == nil {
		return nil, 0, nil
	}
	return u, plan.Txns - len(u.AllDeadLetters()), nil
}

// recycle keeps r, whose buffer is empty, for another chunk.
func (l *txnLoop) recycle(r *reduced) {
	r.skipped, r.err, r.part, r.progress = 0, nil, nil, nil
	l.spare = append(l.spare, r)
}
