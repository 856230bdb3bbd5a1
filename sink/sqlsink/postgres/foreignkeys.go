package postgres

import (
	"context"
	"strings"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink/sqlsink"
)

// deleteRules maps pg_constraint's confdeltype codes to SQL.
var deleteRules = map[string]string{"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"}

// ForeignKeys reads t's own foreign keys from pg_constraint
// (sqlsink.ForeignKeyReader), with whether each is DEFERRABLE and
// INITIALLY DEFERRED.
func (d Dialect) ForeignKeys(ctx context.Context, q sqlsink.Querier, t *schema.Table) ([]schema.ForeignKey, error) {
	rel := d.Quote(t.Namespace) + "." + d.Quote(t.Name)
	rows, err := q.QueryContext(ctx, `SELECT c.conname, pn.nspname, pc.relname, c.confdeltype::text, c.condeferrable, c.condeferred,
		(SELECT string_agg(a.attname, E'\x01' ORDER BY k.i) FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
		   JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n),
		(SELECT string_agg(a.attname, E'\x01' ORDER BY k.i) FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
		   JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n)
		FROM pg_constraint c JOIN pg_class pc ON pc.oid = c.confrelid JOIN pg_namespace pn ON pn.oid = pc.relnamespace
		WHERE c.contype = 'f' AND c.conrelid = $1::regclass
		ORDER BY c.conname`, rel)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var fks []schema.ForeignKey
	for rows.Next() {
		var fk schema.ForeignKey
		var del, cols, parentCols string
		if err := rows.Scan(&fk.Name, &fk.Parent.Namespace, &fk.Parent.Name, &del, &fk.Deferrable, &fk.Deferred, &cols, &parentCols); err != nil {
			return nil, err
		}
		fk.OnDelete = deleteRules[del]
		fk.Columns, fk.ParentColumns = strings.Split(cols, "\x01"), strings.Split(parentCols, "\x01")
		fks = append(fks, fk)
	}
	return fks, rows.Err()
}

// DeferConstraints returns the statement that defers, to COMMIT, every
// constraint of the transaction its user declared DEFERRABLE
// (sqlsink.Deferrer).
func (Dialect) DeferConstraints() string { return "SET CONSTRAINTS ALL DEFERRED" }
