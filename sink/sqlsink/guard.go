package sqlsink

// A table's apply rules (commit.Rules) in SQL: upserts that leave a
// stored row with a newer version alone, deletes that do the same, soft
// deletes, and the count of what the guard refused.

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
)

// Guarder is a Dialect that can write version-guarded upserts, which a
// table with a version column (commit.Rules.Version) needs. A unit with
// such a table is refused by a dialect that is not one.
type Guarder interface {
	// GuardedUpsert writes Upsert's statement for rows rows of cols, but
	// one that leaves a stored row whose column ver holds a newer value
	// than the row's as it is (NULL is older than any value). cols holds
	// ver, which is no key column.
	GuardedUpsert(b *strings.Builder, t *schema.Table, cols []string, rows int, ver string)
}

// ArrayGuarder is an ArrayDialect that writes guarded upserts as array
// statements too (see ArrayDialect); the refused rows are counted by the
// affected rows, as for GuardedUpsert.
type ArrayGuarder interface {
	// GuardedArrayUpsert writes ArrayUpsert's statement with the guard of
	// GuardedUpsert; false when some column has no array form.
	GuardedArrayUpsert(b *strings.Builder, t *schema.Table, cols []*schema.Column, ver string) bool
}

// RefusalCounter is a Guarder whose server cannot tell the rows a guarded
// upsert refused by its affected-row count (MariaDB and MySQL count a row
// found and left as it was like one found and set to equal values): the
// statement counts them itself, in a session variable, which ResetRefused
// zeroes and ReadRefused reads, on the unit's transaction.
type RefusalCounter interface {
	ResetRefused(ctx context.Context, tx *sql.Tx) error
	ReadRefused(ctx context.Context, tx *sql.Tx) (int, error)
}

// maxGuardedDeletes bounds the keys of one guarded delete statement.
const maxGuardedDeletes = 256

// guardedRows reports whether u has a table with a version column.
func guardedRows(u *commit.Unit) bool {
	for _, b := range u.Batches {
		if b.Rules.Version != "" && len(b.Upserts) > 0 {
			return true
		}
	}
	return false
}

// guardedUpsertWork is rowWork for a group of a versioned table: the
// guarded statement, as an array statement when the dialect is an
// ArrayGuarder, never a bulk-load path (LOAD DATA, COPY: they cannot
// leave a newer row alone), its affected rows counted.
func (t *DB) guardedUpsertWork(b *commit.Batch, g commit.Group) (*work, error) {
	gd, ok := t.dialect.(Guarder)
	if !ok {
		return nil, &sink.Error{Op: "write", Table: b.Table.String(),
			Err:  fmt.Errorf("the %s target cannot write version-guarded upserts", t.dialect.Name()),
			Hint: "remove version-column from the table's tables entry, or use a MariaDB, MySQL, PostgreSQL or SQLite target"}
	}
	ver := b.Rules.Version
	w := t.rowWork(b.Table, g, func(sb *strings.Builder, tbl *schema.Table, cols []string, rows int) {
		gd.GuardedUpsert(sb, tbl, cols, rows, ver)
	})
	w.kind, w.ver = kindOther, ver
	if _, ok := t.dialect.(ArrayGuarder); ok && len(g.Rows) >= minArrayRows {
		w.kind = kindGuardedUpsert
	}
	w.affected = new(int64)
	return w, nil
}

// WriteGuardCondition writes the condition of a guarded upsert's update
// in PostgreSQL's and SQLite's spelling: the stored row's version (table
// spelled as the statement names the stored row) is NULL or not newer
// than the proposed row's (excluded).
func WriteGuardCondition(b *strings.Builder, d Dialect, table, excluded, ver string) {
	q := d.Quote(ver)
	b.WriteString(" WHERE ")
	b.WriteString(table + "." + q + " IS NULL OR " + table + "." + q + " <= " + excluded + "." + q)
}

// applyRuleDeletes applies the deletes of b, a batch with rules: guarded
// deletes or soft deletes, chunked, and returns how many the version
// guard refused (rows left in place because theirs is newer).
func (t *DB) applyRuleDeletes(ctx context.Context, tx *sql.Tx, b *commit.Batch) (refused int, err error) {
	tbl, ver := b.Table, b.Rules.Version
	var verCol *schema.Column
	if ver != "" {
		verCol, _ = tbl.Column(ver)
	}
	keyCols := make([]*schema.Column, len(tbl.PrimaryKey))
	for i, k := range tbl.PrimaryKey {
		keyCols[i], _ = tbl.Column(k)
	}
	d := t.dialect
	w := &work{op: "delete from", table: tbl, cols: keyCols, tuples: b.Deletes, pos: b.DeletePos}
	for i := range keyCols {
		w.keyIdx = append(w.keyIdx, i)
	}
	var sb strings.Builder
	var args []any
	n := 0
	ph := func() {
		n++
		d.WritePlaceholder(&sb, n)
	}
	// key writes row i's key condition, and its version guard: allowed
	// (the stored version is not newer) or, for the count, refused.
	key := func(i int, allowed bool) {
		sb.WriteByte('(')
		for j, c := range keyCols {
			if j > 0 {
				sb.WriteString(" AND ")
			}
			sb.WriteString(d.Quote(c.Name) + " = ")
			ph()
			args = append(args, d.Bind(c, b.Deletes[i][j]))
		}
		if verCol != nil {
			q := d.Quote(ver)
			v := b.DeleteVersions[i]
			switch {
			case v == nil && allowed:
				sb.WriteString(" AND " + q + " IS NULL")
			case v == nil:
				sb.WriteString(" AND " + q + " IS NOT NULL")
			case allowed:
				sb.WriteString(" AND (" + q + " IS NULL OR " + q + " <= ")
				ph()
				sb.WriteByte(')')
				args = append(args, d.Bind(verCol, v))
			default:
				sb.WriteString(" AND " + q + " > ")
				ph()
				args = append(args, d.Bind(verCol, v))
			}
		}
		sb.WriteByte(')')
	}
	reset := func() { sb.Reset(); args, n = args[:0], 0 }
	// where writes the conditions of rows start to end, ORed.
	where := func(start, end int, allowed bool) {
		sb.WriteString(" WHERE ")
		for i := start; i < end; i++ {
			if i > start {
				sb.WriteString(" OR ")
			}
			key(i, allowed)
		}
	}
	soft := b.Rules.SoftDelete
	if soft != "" {
		// One statement per key: each delete writes its own time and
		// version.
		softCol, _ := tbl.Column(soft)
		for i := range b.Deletes {
			reset()
			sb.WriteString("UPDATE " + QuotedTable(d, tbl) + " SET " + d.Quote(soft) + " = ")
			ph()
			args = append(args, d.Bind(softCol, b.SoftValues[i]))
			if verCol != nil {
				sb.WriteString(", " + d.Quote(ver) + " = ")
				ph()
				args = append(args, d.Bind(verCol, b.DeleteVersions[i]))
			}
			where(i, i+1, true)
			if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
				return 0, t.wrap("soft-delete in", tbl.String(), w.key(i), err)
			}
		}
	}
	// SQLite nests an OR chain one level per term and refuses one deeper
	// than 1,000.
	per := min(t.chunkRows(len(keyCols)+1, 0), maxGuardedDeletes)
	for start := 0; start < len(b.Deletes); start += per {
		end := min(start+per, len(b.Deletes))
		if soft == "" {
			reset()
			sb.WriteString("DELETE FROM " + QuotedTable(d, tbl))
			where(start, end, true)
			if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
				return 0, t.wrap("delete from", tbl.String(), w.key(start), err)
			}
		}
		if verCol == nil {
			continue
		}
		// The rows of these keys left with a newer version are the
		// deletes the guard refused, counted in the unit's transaction.
		reset()
		sb.WriteString("SELECT COUNT(*) FROM " + QuotedTable(d, tbl))
		where(start, end, false)
		var c int
		if err := tx.QueryRowContext(ctx, sb.String(), args...).Scan(&c); err != nil {
			return 0, t.wrap("count the deletes the version guard refused in", tbl.String(), w.key(start), err)
		}
		refused += c
	}
	return refused, nil
}
