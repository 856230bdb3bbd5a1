package txn

import (
	"errors"
	"fmt"

	"github.com/txsink/txsink/changelog"
)

// Joiner assembles source transactions whose changes are spread over
// several partitions, using a boundary partition that holds each
// transaction's end, in commit order: Debezium's one topic per table plus
// its transaction topic ("<prefix>.transaction").
//
// Each data record belongs to the transaction its changes name (TxnID), or
// to none. The boundary partition holds each transaction's END (a
// changelog.EndTxn change with TxnID and TxnEvents) and records without
// changes (BEGIN events). A transaction is whole once its END has come and
// TxnEvents changes of it have come from the data partitions.
//
// Next releases, in this order of preference, a data record outside any
// transaction at the head of its partition, a boundary record that ends no
// transaction, and the transaction whose END is the oldest unreleased one,
// once it is whole. Transactions are therefore released in commit order,
// whole, and every partition's records are released in partition order,
// so the released records of every partition are always a prefix of what
// was added: committing released records with the position of the last
// released record of each partition is exact, and a restart from those
// positions reads every unreleased record again.
//
// Like Machine, a Joiner is pure and not safe for concurrent use.
type Joiner struct {
	boundary string
	queues   map[string]*queue // by partition, the boundary's included
	order    []string          // partitions in first-seen order, for a deterministic Next
	txns     map[string]*joinTxn
	bytes    int64
	maxBytes int64
	// released remembers the last transactions released, to refuse an
	// event that comes after its transaction was released whole.
	released     map[string]bool
	releasedRing []string
	ringNext     int
}

// releasedMemory is how many released transaction ids a Joiner remembers.
const releasedMemory = 4096

// JoinRecord is one source record as the Joiner takes and releases it.
type JoinRecord struct {
	Pos     changelog.Position
	Changes []changelog.Change
	txn     string // the transaction it belongs to; "" for none
	bytes   int64
}

// Joined is what Next releases: one whole transaction (TxnID set; its data
// records, each partition's in order, then its END record), or one record
// outside any transaction (TxnID empty).
type Joined struct {
	TxnID   string
	Records []JoinRecord
}

type queue struct {
	recs []JoinRecord
}

type joinTxn struct {
	seen   int  // data changes added
	ended  bool // its END was added
	events int  // the END's count
}

// ErrJoin is wrapped by the errors Add returns: the partitions contradict
// each other, or a transaction's end does not come while the buffer fills.
var ErrJoin = errors.New("transaction assembly across partitions")

// NewJoiner returns a Joiner whose boundary partition is named boundary.
// maxBytes (> 0) bounds the bytes of the records it holds: a transaction
// whose END never comes (a wrong transaction topic) stops the pipeline
// instead of filling memory.
func NewJoiner(boundary string, maxBytes int64) *Joiner {
	return &Joiner{boundary: boundary, queues: map[string]*queue{}, txns: map[string]*joinTxn{}, maxBytes: maxBytes,
		released: map[string]bool{}, releasedRing: make([]string, releasedMemory)}
}

// Bytes is the size of the records held (the changes' Size).
func (j *Joiner) Bytes() int64 { return j.bytes }

// Open is the number of transactions with records held and not released.
func (j *Joiner) Open() int { return len(j.txns) }

// Add takes the next record of partition pos.Partition, with its decoded
// changes (none for a tombstone or a BEGIN event). Records of one
// partition must come in order. It returns an error wrapping ErrJoin,
// naming the position, when the record contradicts what came before.
func (j *Joiner) Add(pos changelog.Position, changes []changelog.Change) error {
	r := JoinRecord{Pos: pos, Changes: changes}
	for i := range changes {
		c := &changes[i]
		r.bytes += int64(max(c.Size, 0))
		if i == 0 {
			r.txn = c.TxnID
		} else if c.TxnID != r.txn {
			return fmt.Errorf("%w: %s: one record holds changes of transactions %q and %q", ErrJoin, pos, r.txn, c.TxnID)
		}
	}
	if pos.Partition == j.boundary {
		if err := j.addEnd(&r); err != nil {
			return err
		}
	} else if r.txn != "" {
		if err := j.addData(&r); err != nil {
			return err
		}
	}
	if j.maxBytes > 0 && j.bytes+r.bytes > j.maxBytes {
		return fmt.Errorf("%w: %s: %d bytes of records wait for the ends of %d transactions (limit %d): the transaction topic does not "+
			"end them; check that source.transaction-topic is the Debezium transaction topic of these data topics, or raise "+
			"transaction.multi-table.buffer-size", ErrJoin, pos, j.bytes+r.bytes, len(j.txns), j.maxBytes)
	}
	j.bytes += r.bytes
	q := j.queues[pos.Partition]
	if q == nil {
		q = &queue{}
		j.queues[pos.Partition] = q
		j.order = append(j.order, pos.Partition)
	}
	q.recs = append(q.recs, r)
	return nil
}

func (j *Joiner) txn(id string) *joinTxn {
	t := j.txns[id]
	if t == nil {
		t = &joinTxn{}
		j.txns[id] = t
	}
	return t
}

func (j *Joiner) addData(r *JoinRecord) error {
	if j.released[r.txn] {
		return fmt.Errorf("%w: %s: an event of transaction %s, which was complete and applied already: the data and transaction topics disagree",
			ErrJoin, r.Pos, r.txn)
	}
	t := j.txn(r.txn)
	t.seen += len(r.Changes)
	if t.ended && t.seen > t.events {
		return fmt.Errorf("%w: %s: transaction %s has more events (%d so far) than its END counts (%d): the data and transaction topics disagree",
			ErrJoin, r.Pos, r.txn, t.seen, t.events)
	}
	return nil
}

func (j *Joiner) addEnd(r *JoinRecord) error {
	if len(r.Changes) == 0 {
		return nil // BEGIN, or a tombstone
	}
	c := &r.Changes[0]
	if len(r.Changes) != 1 || c.Kind != changelog.EndTxn {
		return fmt.Errorf("%w: %s: the transaction topic holds a %s change of table %s; it must hold only BEGIN and END events",
			ErrJoin, r.Pos, c.Kind, c.Table)
	}
	if j.released[r.txn] {
		return fmt.Errorf("%w: %s: a second END of transaction %s", ErrJoin, r.Pos, r.txn)
	}
	t := j.txn(r.txn)
	if t.ended {
		return fmt.Errorf("%w: %s: a second END of transaction %s", ErrJoin, r.Pos, r.txn)
	}
	t.ended, t.events = true, int(c.TxnEvents)
	if t.seen > t.events {
		return fmt.Errorf("%w: %s: transaction %s has more events (%d) than its END counts (%d): the data and transaction topics disagree",
			ErrJoin, r.Pos, r.txn, t.seen, t.events)
	}
	return nil
}

// Next returns the next releasable group, or nil. See Joiner for the
// order. The records it returns are no longer held.
func (j *Joiner) Next() *Joined {
	for _, name := range j.order {
		if name == j.boundary {
			continue
		}
		if q := j.queues[name]; len(q.recs) > 0 && q.recs[0].txn == "" {
			return &Joined{Records: []JoinRecord{j.pop(q)}}
		}
	}
	b := j.queues[j.boundary]
	if b == nil || len(b.recs) == 0 {
		return nil
	}
	head := &b.recs[0]
	if head.txn == "" {
		return &Joined{Records: []JoinRecord{j.pop(b)}}
	}
	t := j.txns[head.txn]
	if t.seen < t.events {
		return nil
	}
	// Every earlier transaction is released, and each partition holds its
	// records in commit order: this one's records are at the heads.
	g := &Joined{TxnID: head.txn}
	for _, name := range j.order {
		q := j.queues[name]
		if name == j.boundary {
			continue
		}
		// The transaction's records lead the partition, possibly with
		// records outside any transaction (tombstones) between them.
		last := -1
		for i, r := range q.recs {
			if r.txn == head.txn {
				last = i
			} else if r.txn != "" {
				break
			}
		}
		for range last + 1 {
			g.Records = append(g.Records, j.pop(q))
		}
	}
	g.Records = append(g.Records, j.pop(b))
	delete(j.txns, g.TxnID)
	if old := j.releasedRing[j.ringNext]; old != "" {
		delete(j.released, old)
	}
	j.releasedRing[j.ringNext] = g.TxnID
	j.ringNext = (j.ringNext + 1) % len(j.releasedRing)
	j.released[g.TxnID] = true
	return g
}

func (j *Joiner) pop(q *queue) JoinRecord {
	r := q.recs[0]
	q.recs[0] = JoinRecord{}
	q.recs = q.recs[1:]
	if len(q.recs) == 0 {
		q.recs = nil
	}
	j.bytes -= r.bytes
	return r
}
