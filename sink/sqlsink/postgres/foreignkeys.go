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

// UniqueKeys reads t's unique indexes besides the primary key from
// pg_index (sqlsink.UniqueKeyReader): those on plain columns, without a
// WHERE clause, and not DEFERRABLE (checked at COMMIT, they need nothing).
func (d Dialect) UniqueKeys(ctx context.Context, q sqlsink.Querier, t *schema.Table) ([]schema.UniqueKey, error) {
	rel := d.Quote(t.Namespace) + "." + d.Quote(t.Name)
	rows, err := q.QueryContext(ctx, `SELECT c.relname,
		(SELECT string_agg(a.attname, E'\x01' ORDER BY k.i) FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(n, i)
		   JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n WHERE k.i <= i.indnkeyatts)
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		WHERE i.indrelid = $1::regclass AND i.indisunique AND NOT i.indisprimary
		  AND i.indpred IS NULL AND i.indexprs IS NULL AND i.indimmediate
		  AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = i.indexrelid AND con.condeferrable)
		ORDER BY c.relname`, rel)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var keys []schema.UniqueKey
	for rows.Next() {
		var k schema.UniqueKey
		var cols string
		if err := rows.Scan(&k.Name, &cols); err != nil {
			return nil, err
		}
		k.Columns = strings.Split(cols, "\x01")
		keys = append(keys, k)
	}
	return keys, rows.Err()
}
