// Package commit defines the commit unit: everything txsink applies to a
// target in ONE target transaction. The pure core (package reduce) builds
// units; targets apply them. A unit is the contract between the two:
//
//   - Every Batch's Deletes MUST be applied BEFORE any Batch's Upserts or
//     Inserts, because a deleted row may free a secondary unique value an
//     upsert needs — except where the target's foreign keys need another
//     order (a child's writes before its parent's deletes), which a target
//     that checks them row by row must follow (see package sqlsink).
//   - A Batch's Truncate (a source's TRUNCATE) MUST empty its table before
//     any other statement of the unit, in the unit's own transaction (never
//     by a statement that commits by itself); a target that cannot refuses
//     the unit.
//   - Progress MUST be written in the same target transaction as the rows, so
//     after any crash the target says exactly how far it has applied.
//   - A target MUST apply a unit whole or not at all: a reader never sees
//     half of one.
package commit

import (
	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/schema/coltype"
)

// Unit is one target transaction's worth of work.
type Unit struct {
	// Pipeline names the pipeline whose progress rows the unit advances.
	Pipeline string
	// Batches holds the rows per target table, in the order tables were
	// first seen.
	Batches []*Batch
	// Progress holds, per partition, the position of the last change the
	// unit contains. Targets store it with the rows.
	Progress []changelog.Position
	// Marks holds, by partition, the fingerprint of the position Progress
	// holds for it (a file source's check that the position still points
	// into the bytes it was taken from on resume), when the source gives
	// one. Targets store it with the position; a partition without a mark
	// is stored without one.
	Marks map[string]string
	// Orders holds, per partition and source log, the place of the latest
	// change the unit consumed that tells one (changelog.Order), in
	// first-seen order. The engine stores them with the partition's
	// position, so that copies published again after a restart are told
	// apart; a target need not read them.
	Orders []Order
	// Changes counts the source changes the unit consumed (before reduction).
	Changes int
	// IgnoredDeletes counts the deletes the unit's tables with delete:
	// ignore dropped (see Rules): consumed, and applied as nothing.
	IgnoredDeletes int
	// Refused is set by a target's Apply that committed the unit: how
	// many of its rows a version guard (Rules.Version) kept from
	// overwriting or deleting a stored row with a newer version. Apply
	// sets it afresh on every attempt.
	Refused int
	// DeadLetters holds the source transactions (plain mode: records) the
	// unit quarantines instead of applying, under the dead-letter policy.
	// They MUST be written in the same transaction as Progress, which moves
	// past them.
	DeadLetters []DeadLetter
	// Parts are pieces of the unit a target that streams them
	// (sink.Streamer) was handed ahead of the unit, in order, each with
	// its own Batches and DeadLetters and no Progress: the unit is its
	// Parts, in that order, then its own Batches. Later pieces come after
	// earlier ones as changes do, so a key a later piece writes replaces
	// what an earlier one wrote; each piece is reduced per key within
	// itself only. Only a sink.Streamer is given a unit with Parts.
	Parts []*Unit
}

// Order is the place of the latest change of one source log (Order.Log)
// read from Partition.
type Order struct {
	Partition string
	changelog.Order
}

// DeadLetter is one quarantined source transaction or record.
type DeadLetter struct {
	// Pos is where the offending record was read.
	Pos changelog.Position
	// TxnID is the source transaction's id, when known.
	TxnID string
	// Raw is the record as read, or, when the changes of a whole source
	// transaction are quarantined, each of them as a txsink-json line.
	Raw []byte
	// Reason is the error that refused it.
	Reason string
}

// Rows returns the number of rows the unit writes or deletes, its Parts'
// included.
func (u *Unit) Rows() (deletes, upserts, inserts int) {
	for _, p := range u.Parts {
		d, up, in := p.Rows()
		deletes, upserts, inserts = deletes+d, upserts+up, inserts+in
	}
	for _, b := range u.Batches {
		deletes += len(b.Deletes)
		for _, g := range b.Upserts {
			upserts += len(g.Rows)
		}
		for _, g := range b.Inserts {
			inserts += len(g.Rows)
		}
	}
	return
}

// AllBatches returns the batches of u's Parts, in order, then u's own:
// every table's rows the unit applies, in the order it applies them.
func (u *Unit) AllBatches() []*Batch {
	if len(u.Parts) == 0 {
		return u.Batches
	}
	var out []*Batch
	for _, p := range u.Parts {
		out = append(out, p.AllBatches()...)
	}
	return append(out, u.Batches...)
}

// AllDeadLetters returns the dead letters of u's Parts, in order, then
// u's own.
func (u *Unit) AllDeadLetters() []DeadLetter {
	if len(u.Parts) == 0 {
		return u.DeadLetters
	}
	var out []DeadLetter
	for _, p := range u.Parts {
		out = append(out, p.AllDeadLetters()...)
	}
	return append(out, u.DeadLetters...)
}

// Batch is one table's part of a unit. Values are already converted for
// their columns (package coerce), so a target only binds them.
type Batch struct {
	// Table is the target table.
	Table *schema.Table
	// Truncate says the source emptied the table (a TRUNCATE) before the
	// batch's rows, and after every row an earlier unit wrote: a target
	// deletes every row of the table first, in the unit's transaction,
	// before any of the batch's deletes and writes (and before the
	// writes of tables referencing it), or refuses the unit. Deletes,
	// Upserts and Inserts are the changes after the TRUNCATE.
	Truncate bool
	// TruncatePos is, with Truncate, where the last TRUNCATE of the
	// table was read; error messages name it.
	TruncatePos changelog.Position
	// Deletes lists the keys to delete, each in Table.PrimaryKey order.
	Deletes [][]any
	// DeletePos holds, for each of Deletes, where the change that asked for
	// it was read; error messages name it.
	DeletePos []changelog.Position
	// Rules says how the table's rows meet the rows the target holds;
	// the zero Rules is plain last-writer-wins by key.
	Rules Rules
	// DeleteVersions holds, when Rules.Version is set, each delete's
	// version (converted for the version column; nil is the lowest): the
	// stored row is deleted only when its version is not newer.
	DeleteVersions []any
	// SoftValues holds, when Rules.SoftDelete is set, the value each
	// delete writes into that column (true, or the delete's time).
	SoftValues []any
	// Upserts lists the rows to insert or overwrite by primary key, grouped
	// by the set of columns they carry.
	Upserts []Group
	// Inserts lists rows to append to a table without a primary key.
	Inserts []Group
	// AddColumns lists columns the source added that the target adds in
	// the unit's own transaction, before any row of the unit, where its
	// DDL is transactional (sink.UnitEvolver): Table is the table as it
	// is with them. A target adds each one NULL-able unless the table has
	// it already (a unit committed before, or another instance, added
	// it), so the unit may be applied again.
	AddColumns []coltype.Column
}

// Rules are a table's apply rules beyond last-writer-wins by key. They
// bind the target: a target that cannot honour them must refuse the unit.
type Rules struct {
	// Version names the version column: an upsert overwrites a stored row
	// only when the stored version is not newer than the row's (NULL is
	// older than any version), and a delete deletes it only when it is
	// not newer than the delete's (Batch.DeleteVersions). "" guards nothing.
	Version string
	// SoftDelete names the column a delete sets (Batch.SoftValues)
	// instead of deleting the row; "" deletes rows. Upserts of such a
	// table carry the column's live value (false or NULL), which revives
	// a soft-deleted row.
	SoftDelete string
}

// Guarded reports whether the rules need more than a plain upsert and
// delete by key.
func (r Rules) Guarded() bool { return r.Version != "" || r.SoftDelete != "" }

// Group is a set of rows that carry the same columns.
type Group struct {
	// Columns names the columns each row holds, in the target's column order.
	Columns []string
	// Rows holds the values, one slice per row, in Columns order.
	Rows [][]any
	// Pos holds, for each of Rows, where the change that made it was read;
	// error messages name it.
	Pos []changelog.Position
	// Partial marks rows of updates whose images lack some of the table's
	// columns (compressed or minimal row images): those columns keep their
	// stored values, so each row must exist in the target. A target MUST
	// refuse the unit, naming the key, when one does not, rather than
	// insert it with the columns it lacks left NULL or defaulted.
	Partial bool
}
