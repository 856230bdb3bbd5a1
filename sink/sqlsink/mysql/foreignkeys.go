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
