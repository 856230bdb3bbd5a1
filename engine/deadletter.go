package engine

// Dead letters: bad input quarantined rather than fatal
// (bad-input: dead-letter), in one place for every mode.
//
// What is bad input is errkind's to say (errkind.IsBadInput): a record
// that cannot be decoded, a change the buffer refuses (a value, a key, an
// unknown or refused table), a row the target refused for its own
// values. In plain mode the record is quarantined (deadLetterRecord): it
// goes to the dead-letter table as read, with the reason, in the next
// unit, whose progress moves past it; a record's changes go in all or
// none, so each is checked (checkRecord) before any is buffered. In
// transaction mode the whole source transaction is quarantined
// (txnLoop.quarantine), each of its changes as a txsink-json line, in the
// unit of the transactions around it. The loop that joins a transaction
// topic has no dead letters: which transaction a bad record belongs to is
// unknown there. Every quarantine is counted (Stats.DeadLetters) and
// logged by deadLetterInto.
//
// Server refusals under the dead-letter policy.
//
// Some bad input only the target can tell: text its encoding refuses (a
// NUL byte into PostgreSQL text), a CHECK constraint, a NOT NULL column a
// change leaves without a value. The unit holding such a row fails as a
// whole, and sqlsink's row-at-a-time diagnosis names the change that made
// the row (sink.RefusedRow). Run then notes that change's position as
// bad, drops everything not committed and reads again from the committed
// progress; read again, the change is refused before it is buffered, as a
// value txsink's own checks refuse, so its record (plain mode) or its
// whole source transaction (transaction mode) goes to the dead-letter
// table with the server's reason, in the unit whose progress passes it,
// and the rest is applied. A run after that commit reads on from past it:
// nothing is applied or quarantined twice.

import (
	"context"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/format/native"
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/sink"
)

// deadLettering reports whether bad input is quarantined rather than
// fatal (bad-input: dead-letter).
func (e *Engine) deadLettering() bool { return e.cfg.BadInput == config.BadInputDeadLetter }

// check reports whether the change would be accepted: its table is known
// (or skipped), its values fit, and the target has not refused it (see
// noteRefused).
func (e *Engine) check(ctx context.Context, c *changelog.Change) error {
	if c.Kind == changelog.EndTxn {
		return nil
	}
	if err := e.refusal(c.Pos); err != nil {
		return err
	}
	t, err := e.tableFor(ctx, c)
	if err != nil || t == nil {
		return err
	}
	return e.stale(ctx, t, c, e.buf.Check(t, c))
}

// checkRecord returns the first change of record d that would be refused
// (see check), or nil (plain mode, under the dead-letter policy): the
// changes of a record go in all or none, so all are checked before any
// is buffered. An error that is not about the input is returned as is.
func (e *Engine) checkRecord(ctx context.Context, d *decoded) (*badChange, error) {
	for i := range d.changes {
		if err := e.check(ctx, &d.changes[i]); err != nil {
			if !errkind.IsBadInput(err) {
				return nil, err
			}
			return &badChange{&d.changes[i], err}, nil
		}
	}
	return nil, nil
}

// deadLetterRecord quarantines record d, as read, for reason (plain
// mode): it is counted, logged and committed to the dead-letter table
// with the next unit, whose progress moves past it. txnID is the source
// transaction of the change refused, if any.
func (e *Engine) deadLetterRecord(d *decoded, txnID string, reason error) {
	e.deadLetterInto(e.buf, commit.DeadLetter{Pos: d.pos, TxnID: txnID, Raw: d.raw, Reason: reason.Error()})
}

// quarantinesUndecodable reports whether a record that cannot be decoded
// is quarantined rather than fatal: under the dead-letter policy in plain
// mode. A transaction loop cannot tell which source transaction it was
// part of.
func (e *Engine) quarantinesUndecodable() bool { return e.deadLettering() && !e.cfg.Sink.TxnEnabled }

// deadLetterInto quarantines d through buf.
func (e *Engine) deadLetterInto(buf *reduce.Buffer, d commit.DeadLetter) {
	d.Reason = reduce.DeadLetterReason(d.Reason)
	e.mu.Lock()
	e.stats.DeadLetters++
	e.mu.Unlock()
	e.log.Warn("quarantined bad input in the dead-letter table", "pos", d.Pos.String(), "txn", d.TxnID, "reason", d.Reason)
	buf.DeadLetter(d, e.now())
}

// badChange is a change a transaction cannot be applied with.
type badChange struct {
	c   *changelog.Change
	err error
}

// firstBad returns the first change of a transaction that would be
// refused, by txsink's checks or, as noted, by the target, or nil; an error that is not about the input is returned as is.
func (l *txnLoop) firstBad(ctx context.Context, buf *reduce.Buffer, changes []*changelog.Change) (*badChange, error) {
	for _, c := range changes {
		if c.Kind == changelog.EndTxn {
			continue
		}
		if err := l.e.refusal(c.Pos); err != nil {
			return &badChange{c, err}, nil
		}
		t, err := l.e.tableFor(ctx, c)
		if err == nil && t != nil {
			err = l.e.stale(ctx, t, c, buf.Check(t, c))
		}
		if err != nil {
			if !errkind.IsBadInput(err) {
				return nil, err
			}
			return &badChange{c, err}, nil
		}
	}
	return nil, nil
}

// quarantine records a whole source transaction as a dead letter: each of
// its changes as a txsink-json line (they can be fixed and fed again), the
// position of the bad one, and why.
func (l *txnLoop) quarantine(buf *reduce.Buffer, changes []*changelog.Change, bad *badChange, now time.Time) {
	// buf.SkipChange moves progress past each change; DeadLetter records
	// the lot.
	var raw []byte
	for _, c := range changes {
		if line, err := native.Append(raw, c); err == nil {
			raw = line
		}
		buf.SkipChange(c, now)
	}
	l.e.deadLetterInto(buf, commit.DeadLetter{Pos: bad.c.Pos, TxnID: bad.c.TxnID, Raw: raw, Reason: bad.err.Error()})
}

// refusedAt identifies a change by where it was read: every change of a
// record carries the record's position.
type refusedAt struct {
	partition string
	offset    int64
}

// noteRefused records the change whose row the server refused in err,
// under the dead-letter policy, for the next start of run; it reports
// whether it did. A change refused again although it was noted (it cannot
// be read again without being quarantined) is not noted twice: the error
// then stops the pipeline rather than starting it again forever.
func (e *Engine) noteRefused(err error) bool {
	if !e.deadLettering() || e.joinsTopics() {
		// The loop that joins a transaction topic has no dead letters.
		return false
	}
	te, ok := sink.RefusedRow(err)
	if !ok {
		return false
	}
	at := refusedAt{te.At.Partition, te.At.Offset}
	if _, seen := e.refused[at]; seen {
		return false
	}
	// Refusals committed to the dead-letter table are past the progress
	// and never read again.
	for k := range e.refused {
		if pos, ok := e.Progress(k.partition); ok && pos.Offset >= k.offset {
			delete(e.refused, k)
		}
	}
	if e.refused == nil {
		e.refused = map[refusedAt]*reduce.Error{}
	}
	e.refused[at] = &reduce.Error{Pos: te.At, Table: te.Table, Key: te.Key,
		Reason: "the target refused the row: " + te.Err.Error(),
		Hint:   "fix the value at the source or the target table's definition, and feed the quarantined changes again"}
	e.log.Warn("the target refused a row; starting again from the last commit to quarantine its source transaction", "pos", te.At.String(), "err", te.Err)
	return true
}

// refusal returns the error the target refused the change at pos with,
// as noted by noteRefused, or nil.
func (e *Engine) refusal(pos changelog.Position) error {
	if len(e.refused) == 0 {
		return nil
	}
	if re, ok := e.refused[refusedAt{pos.Partition, pos.Offset}]; ok {
		return re
	}
	return nil
}
