package postgres

import (
	"context"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink/sqlsink"
)

var _ sqlsink.Versioner = Dialect{}

// shapeQuery reads the transaction ids that last wrote the table's catalog
// rows: its pg_class row (a rewrite, a new column count), its columns'
// pg_attribute rows (type, typmod, nullability, default flag, collation,
// dropped) and its constraints. Every ALTER TABLE writes one of them.
const shapeQuery = `SELECT c.xmin::text || '/' || c.relfilenode::text
	|| '/' || COALESCE((SELECT string_agg(a.attnum::text || ':' || a.xmin::text, ',' ORDER BY a.attnum)
		FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0), '')
	|| '/' || COALESCE((SELECT string_agg(k.oid::text || ':' || k.xmin::text, ',' ORDER BY k.oid)
		FROM pg_constraint k WHERE k.conrelid = c.oid), '')
	|| '/' || COALESCE((SELECT string_agg(d.adnum::text || ':' || d.xmin::text, ',' ORDER BY d.adnum)
		FROM pg_attrdef d WHERE d.adrelid = c.oid), '')
	FROM pg_class c
	WHERE c.oid = (quote_ident(COALESCE(NULLIF($1, ''), current_schema())) || '.' || quote_ident($2))::regclass`

// ShapeVersion implements target.Versioner from the catalog rows' xmin.
func (Dialect) ShapeVersion(ctx context.Context, q sqlsink.Querier, name schema.Name) (string, error) {
	var v string
	err := q.QueryRowContext(ctx, shapeQuery, name.Namespace, name.Name).Scan(&v)
	return v, err
}
