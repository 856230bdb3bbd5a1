package sqlsink

import (
	"context"
	"database/sql"
	"strings"

	"github.com/txsink/txsink/schema"
)

// ArrayDialect is implemented by dialects that can write a whole group of
// rows with one short statement taking one array parameter per column
// (PostgreSQL: INSERT ... SELECT FROM unnest($1, $2, ...)). Apply then
// prefers it to multi-row VALUES statements: the statement text no longer
// grows with the rows, so the server parses and plans it once per
// connection instead of once per chunk, and the values travel as a few
// large parameters instead of tens of thousands of small ones.
//
// Each Array* builder reports false when some column's type has no array
// form the dialect trusts; Apply then uses the multi-row statements. A
// failed array statement is diagnosed like any other: its rows are replayed
// one by one with the single-row statements.
type ArrayDialect interface {
	// ArrayUpsert writes the upsert of cols into t with one array
	// parameter per column, in cols order.
	ArrayUpsert(b *strings.Builder, t *schema.Table, cols []*schema.Column) bool
	// ArrayInsert writes the plain insert of cols into t.
	ArrayInsert(b *strings.Builder, t *schema.Table, cols []*schema.Column) bool
	// ArrayDelete writes the delete of the keys of t (key holds its
	// primary-key columns, in order).
	ArrayDelete(b *strings.Builder, t *schema.Table, key []*schema.Column) bool
	// AppendArray appends the array parameter of column i of tuples (each
	// tuple a row of converted values) and returns the extended buffer.
	AppendArray(dst []byte, col *schema.Column, tuples [][]any, i int) []byte
	// MaxArrayBytes bounds the bytes of values one array statement carries.
	MaxArrayBytes() int
}

// statement kinds of a work, for choosing its array statement.
const (
	kindOther = iota
	kindUpsert
	kindInsert
	kindDelete
	kindGuardedUpsert // ArrayGuarder's
)

// arrayStatement writes w's array statement into sb and reports whether
// the dialect has one for it.
func (t *DB) arrayStatement(ad ArrayDialect, sb *strings.Builder, w *work) bool {
	sb.Reset()
	switch w.kind {
	case kindUpsert:
		return ad.ArrayUpsert(sb, w.table, w.cols)
	case kindInsert:
		return ad.ArrayInsert(sb, w.table, w.cols)
	case kindDelete:
		return ad.ArrayDelete(sb, w.table, w.cols)
	case kindGuardedUpsert:
		ag, ok := ad.(ArrayGuarder)
		return ok && ag.GuardedArrayUpsert(sb, w.table, w.cols, w.ver)
	}
	return false
}

// rowKind tells which statement build writes. rowWork is handed a
// builder, not a kind; the builders are pure functions (see Dialect), so
// the one-row statements they write tell them apart.
func (t *DB) rowKind(tbl *schema.Table, cols []string, build builder) int {
	var got, want strings.Builder
	build(&got, tbl, cols, 1)
	t.dialect.Upsert(&want, tbl, cols, 1)
	if got.String() == want.String() {
		return kindUpsert
	}
	want.Reset()
	t.dialect.Insert(&want, tbl, cols, 1)
	if got.String() == want.String() {
		return kindInsert
	}
	return kindOther
}

// execArrays runs w as array statements (see ArrayDialect), each carrying
// as many rows as MaxArrayBytes allows. It reports false, having run
// nothing, when the dialect has no array statement for w.
func (t *DB) execArrays(ctx context.Context, tx *sql.Tx, sb *strings.Builder, args *[]any, w *work) (bool, *failure, error) {
	ad, ok := t.dialect.(ArrayDialect)
	if !ok || len(w.tuples) < minArrayRows || !t.arrayStatement(ad, sb, w) {
		return false, nil, nil
	}
	query := sb.String()
	per := max(1, ad.MaxArrayBytes()/max(1, approxBytes(w.tuples[0])))
	var buf []byte
	for start := 0; start < len(w.tuples); start += per {
		end := min(start+per, len(w.tuples))
		*args = (*args)[:0]
		for i, c := range w.cols {
			buf = ad.AppendArray(buf[:0], c, w.tuples[start:end], i)
			*args = append(*args, string(buf))
		}
		res, err := tx.ExecContext(ctx, query, *args...)
		if err != nil {
			return true, &failure{w: w, start: start, end: end}, t.wrap(w.op, w.table.String(), w.key(start), err)
		}
		if w.affected != nil {
			n, err := res.RowsAffected()
			if err != nil {
				return true, &failure{w: w, start: start, end: end}, t.wrap(w.op, w.table.String(), w.key(start), err)
			}
			*w.affected += n
		}
	}
	return true, nil, nil
}

// minArrayRows is the fewest rows worth an array statement: below it the
// multi-row statement is as quick, and its text is cached per row count.
const minArrayRows = 2
