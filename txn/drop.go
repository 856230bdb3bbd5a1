package txn

import (
	"slices"
)

// Drop forgets partition name: every change of it that is not in the plan
// in flight (its open transaction, finished transactions not yet frozen,
// frozen chunks, and the caller's values for them) leaves the Machine, and
// Bytes falls accordingly. It returns how many changes were dropped.
//
// The engine drops a partition it no longer owns (a Kafka rebalance moved
// it to another instance). Nothing dropped was committed, and the stored
// progress does not cover it, so the new owner reads it again: dropping
// loses nothing. Commit the partition's finished transactions first
// (Ready with flush, Advance) when they should not be read twice.
//
// Drop panics when the plan in flight holds changes of the partition:
// the caller must Advance (or discard the Machine) first.
func (m *Machine[T]) Drop(name string) int {
	p := m.byName[name]
	if p == nil {
		return 0
	}
	if m.inFlight != nil {
		for _, pp := range m.inFlight.parts {
			if pp.p == p {
				panic("txn: Drop of partition " + name + " while a plan holding it is in flight")
			}
		}
	}
	n := len(p.open) + p.cleanChanges
	m.bytes -= p.openBytes + p.cleanBytes
	m.doneRows -= p.cleanRows
	m.doneBytes -= p.cleanBytes
	for _, ck := range p.frozen {
		n += ck.changes
		m.bytes -= ck.bytes
		m.doneRows -= ck.rows
		m.doneBytes -= ck.bytes
	}
	m.frozen -= len(p.frozen)
	if p.cleanTxns > 0 {
		m.cleanParts--
	}
	delete(m.byName, name)
	m.parts = slices.DeleteFunc(m.parts, func(q *partition[T]) bool { return q == p })
	if m.last == p {
		m.last = nil
	}
	return n
}
