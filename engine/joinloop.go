package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/txsink/txsink/source"
	"github.com/txsink/txsink/txn"
)

// joinLoop is transaction mode across partitions (source.transaction-topic):
// a txn.Joiner assembles each source transaction from the data topics'
// partitions and the transaction topic, and releases whole transactions in
// commit order into the per-key buffer, which flushes only between two
// transactions. Every commit therefore holds whole source transactions,
// and each partition's progress covers exactly the records released.
type joinLoop struct {
	e *Engine
	j *txn.Joiner
	// b is the source; boundary its partition of the boundaries (the
	// transaction topic's).
	b        source.Boundaries
	boundary string
}

func (e *Engine) newJoinLoop() (*joinLoop, error) {
	b, ok := e.src.(source.Boundaries)
	if !ok {
		return nil, fmt.Errorf("source.transaction-topic: source type %s carries no transaction boundaries", e.cfg.Source.Type)
	}
	l := &joinLoop{e: e, b: b, boundary: b.BoundaryPartition()}
	l.reset()
	return l, nil
}

// reset drops what the Joiner holds: it is read again from the progress.
func (l *joinLoop) reset() {
	// Twice the transaction buffer: records wait in the Joiner for their
	// END, then in the per-key buffer for the commit.
	l.j = txn.NewJoiner(l.boundary, 2*l.e.cfg.Sink.TxnBufferSize)
}

func (l *joinLoop) record(ctx context.Context, d *decoded) error {
	if d.err != nil {
		// Which transaction an undecodable record belongs to is unknown.
		return d.err
	}
	if err := l.j.Add(d.pos, d.changes); err != nil {
		return err
	}
	now := l.e.now()
	for g := l.j.Next(); g != nil; g = l.j.Next() {
		for _, r := range g.Records {
			if l.e.applied(r.Pos) {
				continue
			}
			if len(r.Changes) == 0 {
				l.e.buf.Skip(r.Pos, now)
				continue
			}
			for i := range r.Changes {
				if err := l.e.add(ctx, &r.Changes[i]); err != nil {
					return err
				}
			}
		}
		// Between two transactions: the only place a flush may cut.
		if err := l.e.MaybeFlush(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (l *joinLoop) note() { l.e.noteBuffer(l.e.buf.Bytes()+l.j.Bytes(), l.j.Open()) }

func (l *joinLoop) tick(ctx context.Context) error {
	err := l.e.MaybeFlush(ctx)
	l.note()
	return err
}

// finish commits every released transaction; what the Joiner still holds
// (transactions not yet whole) is read again after a restart.
func (l *joinLoop) finish(ctx context.Context) error {
	err := l.e.Flush(ctx)
	l.note()
	return err
}

// wake and heldBack: the per-key buffer is held back for a busy target as
// in plain mode.
func (l *joinLoop) wake() <-chan struct{}              { return l.e.async.Freed() }
func (l *joinLoop) heldBack(ctx context.Context) error { return l.e.heldBack(ctx) }

func (l *joinLoop) deadline() (time.Time, bool) {
	next := l.e.NextFlush()
	return next, !next.IsZero()
}

// checkAssigned refuses assigned partitions the source says cannot hold
// the boundaries (see source.Boundaries): Debezium writes every END to
// partition 0 of the transaction topic, and ENDs spread over several
// partitions have no commit order.
func (l *joinLoop) assigned(parts []string) error { return l.b.CheckAssigned(parts) }

// revoked drops the Joiner's records once the partitions are given up,
// whole transactions. Transactions span every partition, so giving up
// some and keeping others cannot be done without losing records: refuse
// it.
func (l *joinLoop) revoked(parts []string, owned map[string]bool) (int, string, error) {
	dropped := l.j.Open()
	l.reset()
	l.note()
	if len(owned) > len(parts) {
		return dropped, "transactions", fmt.Errorf("partitions %v were revoked while others stay with this instance: transactions joined across topics "+
			"need every partition in one instance (a group member of another configuration joined?); stopping, a restart resumes exactly", parts)
	}
	return dropped, "transactions", nil
}
