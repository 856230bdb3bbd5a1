package sqlsink

// A source's TRUNCATE (commit.Batch.Truncate) is applied as DELETE FROM
// the table, never as TRUNCATE: MariaDB and MySQL commit a TRUNCATE
// implicitly, and PostgreSQL's takes an ACCESS EXCLUSIVE lock and ignores
// ON DELETE actions; a DELETE is a statement of the unit's own
// transaction on every server, so the empty table and the rows after it
// commit together or not at all.
//
// The unit's truncates run before any other of its statements: the rows
// a truncated batch holds are the changes after the TRUNCATE, and a
// table referencing a truncated one was truncated by the same source
// statement (PostgreSQL refuses to truncate a table other tables
// reference unless they are truncated too, or named by CASCADE), so its
// rows in the unit come after the TRUNCATE as well. Among themselves the
// truncates go children first, as Order places deletes: a parent is not
// emptied while a child still references it. A target table that
// references a truncated one and is not truncated itself (one the
// pipeline does not read, or a foreign key the source lacks) is the
// server's to refuse, or to clear by its ON DELETE action.
//
// A table whose rows reference each other (a foreign key to itself) has
// those references cleared first, by an UPDATE setting the referencing
// columns NULL where they are NULL-able: MariaDB and MySQL check a
// foreign key row by row, so a DELETE of every row fails on the first
// parent it meets before its children (and an ON DELETE CASCADE stops
// at 15 levels), where PostgreSQL and SQLite check at the statement's
// end. A NOT NULL self-reference is left to the server. Tables that
// reference each other in a cycle, which no order of DELETEs can empty
// (and PostgreSQL cannot defer, when the keys are not DEFERRABLE), have
// every reference among them cleared so alike first, when all are
// NULL-able; otherwise the cycle is refused, as Order refuses one.

import (
	"database/sql"
	"errors"
	"slices"
	"strings"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
)

// TruncatesInUnit reports that the target applies commit.Batch.Truncate
// inside the unit's transaction (sink.Truncater).
func (t *DB) TruncatesInUnit() bool { return true }

var _ sink.Truncater = (*DB)(nil)

// truncateWork is a statement of the TRUNCATE of b's table.
func truncateWork(b *commit.Batch, text string) *work {
	// One tuple of no values: the statement runs once, binding nothing.
	w := &work{op: "truncate", table: b.Table, tuples: [][]any{{}}, pos: []changelog.Position{b.TruncatePos}}
	w.build = func(sb *strings.Builder, _ int) { sb.WriteString(text) }
	return w
}

// unlinkWork is the statement that clears the references of b's table
// to the tables of parents, when they are NULL-able; nil when there are
// none to clear.
func (t *DB) unlinkWork(b *commit.Batch, parents []*schema.Table) *work {
	cols, _ := nullableRefs(b.Table, parents)
	if len(cols) == 0 {
		return nil
	}
	var set, where strings.Builder
	for i, c := range cols {
		if i > 0 {
			set.WriteString(", ")
			where.WriteString(" OR ")
		}
		set.WriteString(t.dialect.Quote(c) + " = NULL")
		where.WriteString(t.dialect.Quote(c) + " IS NOT NULL")
	}
	return truncateWork(b, "UPDATE "+QuotedTable(t.dialect, b.Table)+" SET "+set.String()+" WHERE "+where.String())
}

// nullableRefs returns the referencing columns of tbl's foreign keys to
// parents that are checked by statement order (not INITIALLY DEFERRED),
// and whether every one of them is NULL-able (none are returned if not).
func nullableRefs(tbl *schema.Table, parents []*schema.Table) ([]string, bool) {
	var cols []string
	for i := range tbl.ForeignKeys {
		fk := &tbl.ForeignKeys[i]
		if fk.Deferred || !slices.ContainsFunc(parents, fk.References) {
			continue
		}
		for _, name := range fk.Columns {
			c, ok := tbl.Column(name)
			if !ok || !c.Nullable {
				return nil, false
			}
			if !slices.Contains(cols, c.Name) {
				cols = append(cols, c.Name)
			}
		}
	}
	return cols, true
}

// applyTruncates empties the unit's truncated tables, children first,
// through exec, deferring DEFERRABLE constraints first (deferNow) when only
// that orders a cycle of them. A cycle of foreign keys among them that
// cannot be deferred is broken by clearing every reference among them
// first, when all are NULL-able (no DELETE then meets a reference to its
// rows); else it is refused as a CycleError.
func (t *DB) applyTruncates(batches []*commit.Batch, exec func(*sql.Conn, *work) (*failure, error), canDefer bool, deferNow func() error) error {
	tables := make([]*schema.Table, len(batches))
	truncated := make([]bool, len(batches))
	var emptied []*schema.Table
	for i, b := range batches {
		tables[i], truncated[i] = b.Table, b.Truncate
		if b.Truncate {
			emptied = append(emptied, b.Table)
		}
	}
	if len(emptied) == 0 {
		return nil
	}
	steps, deferAll, err := Order(tables, truncated, make([]bool, len(batches)), canDefer)
	run := func(b *commit.Batch, w *work) error {
		if w == nil {
			return nil
		}
		if _, err := exec(nil, w); err != nil {
			return truncateError(b, err)
		}
		return nil
	}
	var ce *CycleError
	unlinked := errors.As(err, &ce) && unlinkable(emptied)
	if unlinked {
		// Every reference among them cleared first: then any order of
		// the DELETEs holds.
		steps, err = nil, nil
		for i, b := range batches {
			if b.Truncate {
				if err := run(b, t.unlinkWork(b, emptied)); err != nil {
					return err
				}
				steps = append(steps, Step{Table: i, Delete: true})
			}
		}
	}
	if err != nil {
		return err
	}
	if deferAll {
		if err := deferNow(); err != nil {
			return err
		}
	}
	for _, s := range steps {
		b := batches[s.Table]
		if !unlinked {
			// Each table's references to its own rows.
			if err := run(b, t.unlinkWork(b, []*schema.Table{b.Table})); err != nil {
				return err
			}
		}
		if err := run(b, truncateWork(b, "DELETE FROM "+QuotedTable(t.dialect, b.Table))); err != nil {
			return err
		}
	}
	return nil
}

// unlinkable reports whether every foreign key among tables, that their
// order would have to keep, has NULL-able columns.
func unlinkable(tables []*schema.Table) bool {
	for _, tbl := range tables {
		if _, ok := nullableRefs(tbl, tables); !ok {
			return false
		}
	}
	return true
}

// truncateError is the error of a DELETE FROM a truncated table that
// failed: transient as the server said, else the table and the
// TRUNCATE's position, and what to do.
func truncateError(b *commit.Batch, err error) error {
	se, ok := err.(*sink.Error)
	if !ok || se.Transient {
		return err
	}
	se.Key, se.Pos, se.At = "", b.TruncatePos.String(), b.TruncatePos
	se.Hint = "the source truncated this table and the target refused to delete its rows (a foreign key: a table that references it still holds rows, add that table to the pipeline and the publication or make its foreign key ON DELETE CASCADE; or a NOT NULL reference of the table to itself, which MariaDB/MySQL check row by row); " +
		"or set source.truncate: refuse and empty the tables yourself; nothing of this flush was committed"
	return se
}
