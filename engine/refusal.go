package engine

import (
	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/sink/sqlsink"
)

// Server refusals under the dead-letter policy.
//
// Some bad input only the target can tell: text its encoding refuses (a
// NUL byte into PostgreSQL text), a CHECK constraint, a NOT NULL column a
// change leaves without a value. The unit holding such a row fails as a
// whole, and sqlsink's row-at-a-time diagnosis names the change that made
// the row (sqlsink.RefusedRow). Run then notes that change's position as
// bad, drops everything not committed and reads again from the committed
// progress; read again, the change is refused before it is buffered, as a
// value txsink's own checks refuse, so its record (plain mode) or its
// whole source transaction (transaction mode) goes to the dead-letter
// table with the server's reason, in the unit whose progress passes it,
// and the rest is applied. A run after that commit reads on from past it:
// nothing is applied or quarantined twice.

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
	if !e.deadLettering() || (e.cfg.Sink.TxnEnabled && e.cfg.Source.TransactionTopic != "") {
		// The loop that joins a transaction topic has no dead letters.
		return false
	}
	te, ok := sqlsink.RefusedRow(err)
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
