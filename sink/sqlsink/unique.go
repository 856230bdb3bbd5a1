package sqlsink

// Unique keys besides the primary key. A unit keeps only each key's last
// change, so two rows that exchanged a unique value in the source (a = x,
// b = y, then a = y, b = x, through a third value in between) reach the
// target as two upserts that each take the value the other still holds;
// and a row may take a value another row of the unit gives up. Written as
// they come, PostgreSQL and SQLite refuse the statement, and MySQL's
// INSERT ... ON DUPLICATE KEY UPDATE, matching the unique key instead of
// the primary key, updates the other row — silently.
//
// So before a table's upserts, the rows of the target that hold a value
// one of the unit's rows takes are found (one query per unique key), and
// each such holder that the unit itself writes or deletes gives its value
// up first, inside the transaction: its unique columns set to NULL when
// they all take NULL, else the row deleted (the unit's upsert writes it
// again, or its delete was due) — unless a foreign key of the unit's
// tables would cascade from that delete, which fails the unit instead. A holder the unit does not change is an
// error naming both rows and the key: the target disagrees with the
// source, and no write would be right.

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
)

// UniqueKeyReader is a Dialect that reads a table's UNIQUE keys besides its
// primary key. Without it the values a unit's rows exchange are not freed
// first.
type UniqueKeyReader interface {
	// UniqueKeys returns t's unique keys on plain columns, checked at
	// each statement (not deferred), t being as Describe returned it.
	UniqueKeys(ctx context.Context, q Querier, t *schema.Table) ([]schema.UniqueKey, error)
}

// readUniqueKeys fills tbl.UniqueKeys when the dialect reads them.
func (t *DB) readUniqueKeys(ctx context.Context, q Querier, tbl *schema.Table) error {
	r, ok := t.dialect.(UniqueKeyReader)
	if !ok {
		return nil
	}
	keys, err := r.UniqueKeys(ctx, q, tbl)
	if err != nil {
		return fmt.Errorf("read the unique keys of %s: %w", tbl, err)
	}
	tbl.UniqueKeys = keys
	return nil
}

// freeUnique frees, before b's upserts, the unique values they take from
// the rows of the target holding them (see the top of this file). tables
// are the unit's, whose foreign keys say whether deleting a holder would
// cascade.
func (t *DB) freeUnique(ctx context.Context, tx *sql.Tx, b *commit.Batch, tables []*schema.Table) error {
	tbl := b.Table
	if len(tbl.UniqueKeys) == 0 || len(b.Upserts) == 0 || len(tbl.PrimaryKey) == 0 {
		return nil
	}
	mine := map[string]bool{} // the keys b writes or deletes
	for _, g := range b.Upserts {
		at, ok := columnsAt(g.Columns, tbl.PrimaryKey)
		if !ok {
			continue
		}
		for _, row := range g.Rows {
			if k, ok := valueKey(pick(row, at)); ok {
				mine[k] = true
			}
		}
	}
	for _, k := range b.Deletes {
		if s, ok := valueKey(k); ok {
			mine[s] = true
		}
	}
	for i := range tbl.UniqueKeys {
		if err := t.freeUniqueKey(ctx, tx, b, &tbl.UniqueKeys[i], mine, tables); err != nil {
			return err
		}
	}
	return nil
}

func (t *DB) freeUniqueKey(ctx context.Context, tx *sql.Tx, b *commit.Batch, uk *schema.UniqueKey, mine map[string]bool, tables []*schema.Table) error {
	tbl, d := b.Table, t.dialect
	cols := make([]*schema.Column, len(uk.Columns))
	nullable := true
	for i, name := range uk.Columns {
		c, ok := tbl.Column(name)
		if !ok {
			return nil
		}
		cols[i] = c
		nullable = nullable && c.Nullable
	}
	takers := map[string]string{} // value → the key of the row taking it
	var values [][]any
	for _, g := range b.Upserts {
		at, ok := columnsAt(g.Columns, uk.Columns)
		keyAt, kok := columnsAt(g.Columns, tbl.PrimaryKey)
		if !ok || !kok {
			continue
		}
		for _, row := range g.Rows {
			v := pick(row, at)
			vk, ok := valueKey(v)
			if !ok {
				continue // NULL takes no value
			}
			if _, seen := takers[vk]; !seen {
				values = append(values, v)
			}
			takers[vk], _ = valueKey(pick(row, keyAt))
		}
	}
	if len(values) == 0 {
		return nil
	}
	npk := len(tbl.PrimaryKey)
	var free [][]any
	per := t.chunkRows(len(cols), 64)
	for start := 0; start < len(values); start += per {
		end := min(start+per, len(values))
		var sb strings.Builder
		sb.WriteString("SELECT ")
		QuoteList(&sb, d, append(append([]string(nil), tbl.PrimaryKey...), uk.Columns...))
		sb.WriteString(" FROM " + QuotedTable(d, tbl) + " WHERE ")
		WriteKeyIn(&sb, d, uk.Columns, end-start)
		var args []any
		for _, v := range values[start:end] {
			for j, x := range v {
				args = append(args, d.Bind(cols[j], x))
			}
		}
		res, err := tx.QueryContext(ctx, sb.String(), args...)
		if err != nil {
			return t.wrap("read the rows holding the unique values a flush takes in", tbl.String(), "", err)
		}
		for res.Next() {
			vals := make([]any, npk+len(cols))
			ptrs := make([]any, len(vals))
			for j := range vals {
				ptrs[j] = &vals[j]
			}
			if err := res.Scan(ptrs...); err != nil {
				res.Close()
				return t.wrap("read the rows holding the unique values a flush takes in", tbl.String(), "", err)
			}
			hk, _ := valueKey(vals[:npk])
			vk, _ := valueKey(vals[npk:])
			if tk, ok := takers[vk]; ok && tk == hk {
				continue // the row keeps its own value
			}
			if !mine[hk] {
				res.Close()
				for j, v := range vals {
					if b, ok := v.([]byte); ok {
						vals[j] = string(b) // a driver's text, not bytes
					}
				}
				return &sink.Error{Op: "write", Table: tbl.String(), Key: renderKey(vals[:npk]),
					Err:  fmt.Errorf("this row holds %s = %s, which the flush gives to row %s, and the flush does not change this row: the target disagrees with the source, whose unique key %s allows one of them", strings.Join(uk.Columns, ", "), renderKey(vals[npk:]), renderTaker(takers[vk]), uk.Name),
					Hint: "another writer changed the row, or its change is in another partition or a later flush; correct the row on the target (or drop the unique key there), then run again (nothing of this flush was committed)"}
			}
			free = append(free, vals[:npk])
		}
		err = res.Err()
		res.Close()
		if err != nil {
			return t.wrap("read the rows holding the unique values a flush takes in", tbl.String(), "", err)
		}
	}
	if len(free) == 0 {
		return nil
	}
	if !nullable {
		if err := refuseCascade(tbl, uk, tables, free[0]); err != nil {
			return err
		}
	}
	per = t.chunkRows(npk, 64)
	for start := 0; start < len(free); start += per {
		end := min(start+per, len(free))
		var sb strings.Builder
		if nullable {
			sb.WriteString("UPDATE " + QuotedTable(d, tbl) + " SET ")
			for i, c := range uk.Columns {
				if i > 0 {
					sb.WriteByte(',')
				}
				sb.WriteString(d.Quote(c) + " = NULL")
			}
			sb.WriteString(" WHERE ")
		} else {
			sb.WriteString("DELETE FROM " + QuotedTable(d, tbl) + " WHERE ")
		}
		// The key's placeholders come after none: WriteKeyIn numbers
		// from 1.
		WriteKeyIn(&sb, d, tbl.PrimaryKey, end-start)
		var args []any
		for _, k := range free[start:end] {
			args = append(args, k...)
		}
		if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
			return t.wrap("free the unique values a flush takes in", tbl.String(), renderKey(free[start]), err)
		}
	}
	return nil
}

// refuseCascade fails when deleting a holder of a NOT NULL unique value
// would run an ON DELETE action of a foreign key of the unit's tables
// that references tbl: the rows referencing it would be deleted or
// changed, which the source never did.
func refuseCascade(tbl *schema.Table, uk *schema.UniqueKey, tables []*schema.Table, holder []any) error {
	for _, ct := range tables {
		for i := range ct.ForeignKeys {
			fk := &ct.ForeignKeys[i]
			if !fk.References(tbl) || fk.OnDelete == "" || fk.OnDelete == "NO ACTION" || fk.OnDelete == "RESTRICT" {
				continue
			}
			return &sink.Error{Op: "write", Table: tbl.String(), Key: renderKey(holder),
				Err:  fmt.Errorf("this row holds a value of unique key %s (%s) that another row of the flush takes; the key's columns take no NULL, so the row would have to be deleted and written again, and foreign key %s (ON DELETE %s) would change the rows referencing it", uk.Name, strings.Join(uk.Columns, ", "), fk.Label(ct), fk.OnDelete),
				Hint: "let the unique key's columns take NULL on the target (txsink then clears the value instead of deleting the row), or drop the unique index there (the source enforces it already); nothing of this flush was committed"}
		}
	}
	return nil
}

// renderTaker renders a key kept as valueKey's text.
func renderTaker(k string) string {
	return "(" + strings.ReplaceAll(strings.TrimSuffix(k, "\x00"), "\x00", ", ") + ")"
}
