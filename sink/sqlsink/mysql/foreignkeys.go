package mysql

import (
	"context"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink/sqlsink"
)

// ForeignKeys reads t's own foreign keys from information_schema
// (sqlsink.ForeignKeyReader). MySQL and MariaDB check them row by row and
// cannot defer them.
func (d *Dialect) ForeignKeys(ctx context.Context, q sqlsink.Querier, t *schema.Table) ([]schema.ForeignKey, error) {
	rows, err := q.QueryContext(ctx, `SELECT k.CONSTRAINT_NAME, k.COLUMN_NAME,
		k.REFERENCED_TABLE_SCHEMA, k.REFERENCED_TABLE_NAME, k.REFERENCED_COLUMN_NAME, r.DELETE_RULE
		FROM information_schema.KEY_COLUMN_USAGE k
		JOIN information_schema.REFERENTIAL_CONSTRAINTS r
		  ON r.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA AND r.CONSTRAINT_NAME = k.CONSTRAINT_NAME AND r.TABLE_NAME = k.TABLE_NAME
		WHERE k.TABLE_SCHEMA = ? AND k.TABLE_NAME = ? AND k.REFERENCED_TABLE_NAME IS NOT NULL
		ORDER BY k.CONSTRAINT_NAME, k.ORDINAL_POSITION`, t.Namespace, t.Name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var fks []schema.ForeignKey
	for rows.Next() {
		var name, col, ps, pt, pc, del string
		if err := rows.Scan(&name, &col, &ps, &pt, &pc, &del); err != nil {
			return nil, err
		}
		if n := len(fks); n == 0 || fks[n-1].Name != name {
			fks = append(fks, schema.ForeignKey{Name: name, Parent: schema.Name{Namespace: ps, Name: pt}, OnDelete: del})
		}
		fk := &fks[len(fks)-1]
		fk.Columns = append(fk.Columns, col)
		fk.ParentColumns = append(fk.ParentColumns, pc)
	}
	return fks, rows.Err()
}

// UniqueKeys reads t's UNIQUE indexes besides the primary key from
// information_schema (sqlsink.UniqueKeyReader); an index on a prefix of
// a column or on an expression is left out.
func (d *Dialect) UniqueKeys(ctx context.Context, q sqlsink.Querier, t *schema.Table) ([]schema.UniqueKey, error) {
	rows, err := q.QueryContext(ctx, `SELECT INDEX_NAME, COALESCE(COLUMN_NAME, ''), SUB_PART IS NOT NULL
		FROM information_schema.STATISTICS
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND NON_UNIQUE = 0 AND INDEX_NAME <> 'PRIMARY'
		ORDER BY INDEX_NAME, SEQ_IN_INDEX`, t.Namespace, t.Name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var keys []schema.UniqueKey
	skip := map[string]bool{}
	for rows.Next() {
		var name, col string
		var prefix bool
		if err := rows.Scan(&name, &col, &prefix); err != nil {
			return nil, err
		}
		if col == "" || prefix {
			skip[name] = true
		}
		if n := len(keys); n == 0 || keys[n-1].Name != name {
			keys = append(keys, schema.UniqueKey{Name: name})
		}
		keys[len(keys)-1].Columns = append(keys[len(keys)-1].Columns, col)
	}
	out := keys[:0]
	for _, k := range keys {
		if !skip[k.Name] {
			out = append(out, k)
		}
	}
	return out, rows.Err()
}
