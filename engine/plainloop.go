package engine

import (
	"context"
	"time"

	"github.com/txsink/txsink/reduce"
)

// plainLoop is Run's loop without transaction mode: each change is its own
// source transaction, buffered per key (reduce.Buffer) and flushed by the
// flush policy (MaybeFlush), each flush one unit the committer applies.
type plainLoop struct{ e *Engine }

func (l *plainLoop) record(ctx context.Context, d *decoded) error {
	return l.e.addDecoded(ctx, d)
}

func (l *plainLoop) note() { l.e.noteBuffer(l.e.buf.Bytes(), 0) }

func (l *plainLoop) tick(ctx context.Context) error {
	err := l.e.MaybeFlush(ctx)
	l.note()
	return err
}

func (l *plainLoop) finish(ctx context.Context) error {
	err := l.e.Flush(ctx)
	l.note()
	return err
}

// heldBack commits the buffer when it is due but was held back for a busy
// target (see Engine.MaybeFlush), as it would have been committed without
// the wait: a pipeline stopped by an error (a bad record, say) keeps what
// came before it and was due, as when every due buffer went at once.
// Nothing is committed once the committer has failed.
func (l *plainLoop) heldBack(ctx context.Context) error { return l.e.heldBack(ctx) }

func (e *Engine) heldBack(ctx context.Context) error {
	if e.async.failed() != nil || e.buf.Due(e.now(), e.cutPolicy()) == reduce.NotDue {
		return nil
	}
	return e.flush(ctx, "explicit")
}

// wake gets a value when the committer is done with a unit: a buffer held
// back for it may go now.
func (l *plainLoop) wake() <-chan struct{} { return l.e.async.Freed() }

func (l *plainLoop) deadline() (time.Time, bool) {
	next := l.e.NextFlush()
	return next, !next.IsZero()
}

// assigned takes any partitions: each change is its own transaction.
func (l *plainLoop) assigned([]string) error { return nil }

// revoked drops nothing: finish committed every change read, and the
// buffer forgets the partitions (Engine.revoke).
func (l *plainLoop) revoked([]string, map[string]bool) (int, string, error) { return 0, "changes", nil }

func (e *Engine) addDecoded(ctx context.Context, d *decoded) error {
	if d.err != nil {
		// Only the dead-letter policy lets a decoding error get here.
		e.deadLetterRecord(d, "", d.err)
		return e.MaybeFlush(ctx)
	}
	if len(d.changes) == 0 {
		return e.Consumed(ctx, d.pos)
	}
	if e.applied(d.pos) {
		// Every change of a record carries the record's position.
		return nil
	}
	if e.deadLettering() {
		if bad, err := e.checkRecord(ctx, d); err != nil || bad != nil {
			if err != nil {
				return err
			}
			e.deadLetterRecord(d, bad.c.TxnID, bad.err)
			return e.MaybeFlush(ctx)
		}
	}
	for i := range d.changes {
		if err := e.add(ctx, &d.changes[i]); err != nil {
			return err
		}
	}
	return e.MaybeFlush(ctx)
}
