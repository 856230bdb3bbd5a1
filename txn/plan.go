package txn

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/txsink/txsink/changelog"
)

// Reason says why Ready cut a plan.
type Reason uint8

// The reasons.
const (
	// Interval: CommitInterval passed since the previous plan was cut (or,
	// for the first plan, since the Machine first saw the time).
	Interval Reason = iota + 1
	// BufferFull: Bytes() reached BufferSize.
	BufferFull
	// Flush: the engine asked (end of input, shutdown).
	Flush
	// Size: the finished transactions reached CommitRows rows or
	// CommitBytes.
	Size
)

// String returns "interval", "buffer-full", "flush" or "size".
func (r Reason) String() string {
	switch r {
	case Interval:
		return "interval"
	case BufferFull:
		return "buffer-full"
	case Flush:
		return "flush"
	case Size:
		return "size"
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

// Plan is one commit: whole source transactions of one or more partitions,
// to be applied in ONE target transaction. Its contract:
//
//   - Chunks and Progress MUST be applied in one target transaction: all of
//     them become visible together, or none does.
//   - Progress MUST be written in that same transaction, BEFORE its COMMIT;
//     it is exactly how far each listed partition is applied.
//   - The plan MUST be applied whole. On a transient failure retry it, the
//     same plan, from the start; on a permanent one stop the pipeline.
//     Never apply a subset: that would split a source transaction.
//   - Advance(plan) MUST be called AFTER the commit succeeded, and only then.
type Plan[T any] struct {
	// Reason says why the plan was cut.
	Reason Reason
	// Chunks hold whole source transactions, each chunk a run of them of
	// one partition: per partition, every change from the one after the
	// partition's previous plan up to and including a transaction end, in
	// source order. Partitions follow one another in the order the Machine
	// first saw them; that order carries no meaning, since the source
	// promises order only inside a partition. Apply the chunks' values,
	// in this order, as one commit (the engine merges its per-key
	// reductions into one commit.Unit).
	Chunks []Chunk[T]
	// Changes counts the changes in Chunks.
	Changes int
	// Progress holds, for each partition in Chunks, the position of its
	// last change (always a transaction end).
	Progress []changelog.Position
	// Txns counts the source transactions in Chunks.
	Txns int
	// Bytes sums the Size of the changes; Advance frees as much.
	Bytes int64

	parts []planPart[T]
}

// Chunk is a run of whole source transactions of one partition in a Plan:
// the value the caller built for them (see Machine.Finished), and what
// the Machine counted of them.
type Chunk[T any] struct {
	// Value is what the caller added to Machine.Finished as each of the
	// chunk's transactions ended.
	Value T
	// Last is the position of the chunk's last change, a transaction
	// end; its Partition is the chunk's.
	Last changelog.Position
	// Changes counts the chunk's changes, Txns its source transactions.
	Changes, Txns int
	// Bytes sums the Size of its changes.
	Bytes int64
}

type planPart[T any] struct {
	p      *partition[T]
	chunks int // the partition's first chunks belong to the plan
}

// Describe renders the plan deterministically, one chunk a line:
//
//	plan interval: 3 txns, 4 changes, 250 bytes
//	  p0 up to p0:2: 2 txns, 3 changes, 200 bytes
//	  p1 up to p1:1: 1 txns, 1 changes, 50 bytes
//	progress p0:2 p1:1
func (p *Plan[T]) Describe() string {
	return p.describe(func(ck Chunk[T]) string {
		return fmt.Sprintf("  %s up to %s: %d txns, %d changes, %d bytes\n", ck.Last.Partition, ck.Last, ck.Txns, ck.Changes, ck.Bytes)
	})
}

// describe renders the plan with each chunk rendered by chunk.
func (p *Plan[T]) describe(chunk func(Chunk[T]) string) string {
	if p == nil {
		return "no plan\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "plan %s: %d txns, %d changes, %d bytes\n", p.Reason, p.Txns, p.Changes, p.Bytes)
	for _, ck := range p.Chunks {
		b.WriteString(chunk(ck))
	}
	b.WriteString("progress")
	for _, pos := range p.Progress {
		b.WriteString(" ")
		b.WriteString(pos.String())
	}
	b.WriteByte('\n')
	return b.String()
}

const clockFormat = "15:04:05.000"

// Describe renders the Machine's state deterministically, for tests and
// debugging logs, for example:
//
//	bytes 350, pressure none, open txns 1, in flight none, deadline 00:00:01.100
//	p0: last switch 00:00:00.000
//	  frozen 1 txns, 2 changes, 200 bytes, up to p0:2
//	  finished 1 txns, 1 changes, 100 bytes, ended 00:00:00.600
//	  open t3, 1 changes, 50 bytes, from p0:4
//
// Times are printed as time of day (tests start their clock at midnight).
func (m *Machine[T]) Describe() string {
	var b strings.Builder
	inflight := "none"
	if m.inFlight != nil {
		inflight = fmt.Sprintf("%d txns", m.inFlight.Txns)
	}
	fmt.Fprintf(&b, "bytes %d, pressure %s, open txns %d, in flight %s, deadline ", m.bytes, m.Pressure(), m.OpenTxns(), inflight)
	if d, ok := m.NextDeadline(); ok {
		b.WriteString(d.Format(clockFormat))
	} else {
		b.WriteString("none")
	}
	b.WriteByte('\n')
	for _, p := range m.parts {
		b.WriteString(p.name)
		b.WriteString(": last switch ")
		if p.switched {
			b.WriteString(p.lastSwitch.Format(clockFormat))
		} else {
			b.WriteString("never")
		}
		b.WriteByte('\n')
		planned := len(p.frozen) - len(m.unplanned(p))
		for i, ck := range p.frozen {
			fmt.Fprintf(&b, "  frozen %d txns, %d changes, %d bytes, up to %s", ck.txns, ck.changes, ck.bytes, ck.last)
			if i < planned {
				b.WriteString(" (in flight)")
			}
			b.WriteByte('\n')
		}
		if p.cleanTxns > 0 {
			fmt.Fprintf(&b, "  finished %d txns, %d changes, %d bytes, ended %s\n", p.cleanTxns, p.cleanChanges, p.cleanBytes, p.lastEnd.Format(clockFormat))
		}
		if len(p.open) > 0 {
			fmt.Fprintf(&b, "  open %s, %d changes, %d bytes, from %s\n", cmp.Or(p.openID, "(no id)"), len(p.open), p.openBytes, p.open[0].Pos)
		}
	}
	return b.String()
}
