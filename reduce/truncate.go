package reduce

// A TRUNCATE (changelog.Truncate): every row of a table is gone at its
// place in the changelog. The buffer drops what it holds of the table
// (those rows were put there before it, and the target's DELETE of every
// row covers them), marks the table's state truncated, and buffers the
// table's later changes as usual; Take hands the mark out as
// commit.Batch.Truncate, which the target applies before the batch's
// other statements. Merge carries the mark: a truncate in the later
// buffer drops the earlier one's rows of the table, a truncate in the
// earlier one stays in front of the later one's rows.

import (
	"fmt"

	"github.com/txsink/txsink/changelog"
)

// checkTruncate reports whether a TRUNCATE of t can be applied under t's
// rules: a version column guards rows one by one against their stored
// versions, and a soft delete marks each row, neither of which a DELETE
// of every row honours, so both are refused.
func checkTruncate(t *Table, c *changelog.Change) error {
	if t.fan != nil || t.history != nil {
		// A history table keeps every change; emptying it, or leaving it
		// while its upsert table is emptied, would each be a guess.
		return &Error{Pos: c.Pos, Table: t.Schema.String(),
			Reason: "a TRUNCATE reached a table that history entries (tables[].mode: history) record",
			Hint:   "set source.truncate: refuse and empty the target tables yourself, or route the table without history entries"}
	}
	if !t.Rules.Guarded() {
		return nil
	}
	rule := "version-column " + t.Rules.Version
	if t.Rules.SoftDelete != "" {
		rule = "delete: soft (column " + t.Rules.SoftDelete + ")"
	}
	return &Error{Pos: c.Pos, Table: t.Schema.String(),
		Reason: fmt.Sprintf("a TRUNCATE reached a table with %s, which a delete of every row cannot honour", rule),
		Hint:   "drop the rule from the table's tables entry, or set source.truncate: refuse and empty the target table yourself"}
}

// truncate applies a TRUNCATE of t at c's position: what b holds of t
// is dropped and t's batch is marked to empty the table first. Under
// delete: ignore the TRUNCATE is one more ignored delete, and the rows
// stay.
func (b *Buffer) truncate(t *Table, c *changelog.Change) error {
	if err := checkTruncate(t, c); err != nil {
		return err
	}
	if t.ignoreDeletes {
		b.ignored++
		return nil
	}
	b.dropRows(b.state(t), c.Pos)
	return nil
}

// dropRows forgets every row ts holds, as a TRUNCATE of its table at pos
// does, and marks it truncated.
func (b *Buffer) dropRows(ts *tableState, pos changelog.Position) {
	for i := range ts.entries {
		b.bytes -= int64(ts.entries[i].size)
	}
	for i := range ts.inserts {
		b.bytes -= int64(ts.inserts[i].size)
	}
	b.rows -= len(ts.entries) + len(ts.inserts)
	ts.reset()
	ts.truncated, ts.truncPos = true, pos
}
