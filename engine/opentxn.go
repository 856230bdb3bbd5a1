package engine

import "github.com/txsink/txsink/changelog"

// openTxn is what the transaction loop knows of a partition's open
// source transaction, and of the ones that ended before it.
type openTxn struct {
	id     string
	events int
	// order is the TxnOrder of the last change read of the transaction;
	// ended holds the ids of the partition's transactions that ended last
	// (a ring, from next), and dropping the one whose copies are being
	// dropped (see replayed).
	order    int32
	ended    [recentEnded]string
	next     int
	dropping string
	// mem is the memory the transaction's decoded changes take, for
	// max-txn-bytes (see bound); inJob says a decode job of the partition
	// is being taken, whose first record is at jobFrom.
	mem     int64
	jobFrom int64
	inJob   bool
}

// recentEnded is how many ended transactions a partition remembers the
// ids of, to know one published again.
const recentEnded = 64

// replayed reports whether c is a copy of an event its partition had
// before, published again: Debezium Server, restarted, publishes once more
// what it published since its last offset flush, and a NATS JetStream
// stream (no message id) or a Kafka topic (a producer without
// idempotence) keeps both. Only Debezium's transaction metadata tells
// copies, so only changes with a TxnOrder are judged: one whose TxnOrder
// is not above the last one read of its open transaction, and one of a
// transaction that ended lately in the partition, whose END is dropped
// too. Without this, a transaction published again in part would add its
// copies to the events its END counts, and stop the pipeline.
//
// Copies of changes with a place in their source's log (changelog.Order)
// are dropped first, by it (see copies.go), also after txsink restarted;
// the END of their transaction, which was committed whole, is then
// dropped as one that ended lately. The metadata's memory is the run's:
// copies without a place read after txsink restarted are applied again
// (to keyed tables that is harmless, the rows converge; a transaction
// published again in part is then refused by its END's count).
func (l *txnLoop) replayed(c *changelog.Change) bool {
	if l.e.dropCopy(c) {
		// A copy by its place in the source's log (see copies.go): its
		// transaction was committed whole, so its END is a copy too.
		if c.TxnID != "" {
			if ot := l.openOf(c.Pos.Partition); ot.id != c.TxnID && !ot.endedLately(c.TxnID) {
				ot.remember(c.TxnID)
			}
		}
		return true
	}
	if c.TxnID == "" {
		return false
	}
	ot := l.openOf(c.Pos.Partition)
	var dup bool
	switch {
	case c.Kind == changelog.EndTxn:
		dup = ot.id != c.TxnID && ot.endedLately(c.TxnID)
	case c.TxnOrder == 0:
		return false
	case ot.id == c.TxnID:
		dup = c.TxnOrder <= ot.order
	default:
		dup = ot.endedLately(c.TxnID)
	}
	if !dup {
		if c.Kind != changelog.EndTxn {
			ot.order = c.TxnOrder
		}
		return false
	}
	if c.Kind != changelog.EndTxn {
		l.e.copies++
	}
	if ot.dropping != c.TxnID {
		ot.dropping = c.TxnID
		l.e.log.Warn("dropping events published again (their source transaction was read before; the source, such as Debezium Server, restarted)",
			"transaction", c.TxnID, "position", c.Pos.String())
	}
	return true
}

// remember notes that transaction id ended.
func (ot *openTxn) remember(id string) {
	ot.ended[ot.next] = id
	ot.next = (ot.next + 1) % recentEnded
}

// endedLately reports whether transaction id is one of the partition's
// last recentEnded to end.
func (ot *openTxn) endedLately(id string) bool {
	for _, e := range ot.ended {
		if e == id {
			return true
		}
	}
	return false
}
