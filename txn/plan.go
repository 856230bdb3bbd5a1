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
//
// Chunks are the arrays the Machine froze, handed out without a copy: read
// them only (the Machine never writes them again either). Progress is the
// engine's.
type Plan struct {
	// Reason says why the plan was cut.
	Reason Reason
	// Chunks hold whole source transactions, each chunk a run of them of
	// one partition: per partition, every change from the one after the
	// partition's previous plan up to and including a transaction end, in
	// source order. Partitions follow one another in the order the Machine
	// first saw them; that order carries no meaning, since the source
	// promises order only inside a partition. Feed the changes, in this
	// order, to a reduce.Buffer to get one commit.Unit.
	//
	// The changes are the very ones stepped (see StepCounted).
	Chunks [][]*changelog.Change
	// Changes counts the changes in Chunks.
	Changes int
	// Progress holds, for each partition in Chunks, the position of its
	// last change (always a transaction end).
	Progress []changelog.Position
	// Txns counts the source transactions in Chunks.
	Txns int
	// Bytes sums the Size of the changes; Advance frees as much.
	Bytes int64

	parts []planPart
}

type planPart struct {
	p      *partition
	chunks int // the partition's first chunks belong to the plan
}

// Describe renders the plan deterministically, one change a line:
//
//	plan interval: 2 txns, 3 changes, 250 bytes
//	  p0:1 t1 orders +I id=1
//	  p0:2 t1 items +I id=10 end
//	  p1:1 t7 orders -D id=4 end
//	progress p0:2 p1:1
func (p *Plan) Describe() string {
	if p == nil {
		return "no plan\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "plan %s: %d txns, %d changes, %d bytes\n", p.Reason, p.Txns, p.Changes, p.Bytes)
	for _, chunk := range p.Chunks {
		for _, c := range chunk {
			b.WriteString("  ")
			b.WriteString(describeChange(c))
			b.WriteByte('\n')
		}
	}
	b.WriteString("progress")
	for _, pos := range p.Progress {
		b.WriteString(" ")
		b.WriteString(pos.String())
	}
	b.WriteByte('\n')
	return b.String()
}

func describeChange(c *changelog.Change) string {
	var b strings.Builder
	b.WriteString(c.Pos.String())
	b.WriteByte(' ')
	if c.TxnID != "" {
		b.WriteString(c.TxnID)
		b.WriteByte(' ')
	}
	b.WriteString(c.Table.String())
	b.WriteByte(' ')
	b.WriteString(c.Kind.String())
	img := c.Image()
	for i, n := range img.Names {
		fmt.Fprintf(&b, " %s=%v", n, img.Values[i])
	}
	if c.TxnEnd {
		b.WriteString(" end")
	}
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
//	  region orders: 3 changes, 250 bytes
//
// Times are printed as time of day (tests start their clock at midnight).
func (m *Machine) Describe() string {
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
	regions := m.Regions()
	for _, p := range m.parts {
		b.WriteString(p.name)
		b.WriteString(": last switch ")
		if p.switched {
			b.WriteString(p.lastSwitch.Format(clockFormat))
		} else {
			b.WriteString("never")
		}
		b.WriteByte('\n')
		planned := 0
		if m.inFlight != nil {
			for _, pp := range m.inFlight.parts {
				if pp.p == p {
					planned = pp.chunks
				}
			}
		}
		for i, ck := range p.frozen {
			fmt.Fprintf(&b, "  frozen %d txns, %d changes, %d bytes, up to %s", ck.txns, len(ck.changes), ck.bytes, ck.changes[len(ck.changes)-1].Pos)
			if i < planned {
				b.WriteString(" (in flight)")
			}
			b.WriteByte('\n')
		}
		if p.clean > 0 {
			fmt.Fprintf(&b, "  finished %d txns, %d changes, %d bytes, ended %s\n", p.cleanTxns, p.clean, p.cleanBytes, p.lastEnd.Format(clockFormat))
		}
		if open := p.active[p.clean:]; len(open) > 0 {
			fmt.Fprintf(&b, "  open %s, %d changes, %d bytes, from %s\n", cmp.Or(p.openID, "(no id)"), len(open), p.openBytes, open[0].Pos)
		}
		for _, r := range regions {
			if r.Partition == p.name {
				fmt.Fprintf(&b, "  region %s: %d changes, %d bytes\n", r.Table, r.Changes, r.Bytes)
			}
		}
	}
	return b.String()
}
