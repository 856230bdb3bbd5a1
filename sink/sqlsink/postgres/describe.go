package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink/sqlsink"
)

// Describe reads name from information_schema and pg_index: the table
// name.Name of schema name.Namespace, or of current_schema() when that is "".
func (d Dialect) Describe(ctx context.Context, q sqlsink.Querier, name schema.Name) (*schema.Table, error) {
	ns, tbl := name.Namespace, name.Name
	if ns == "" {
		if err := q.QueryRowContext(ctx, "SELECT current_schema()").Scan(&ns); err != nil {
			return nil, err
		}
	}
	rows, err := q.QueryContext(ctx, `SELECT column_name, data_type, udt_name, is_nullable,
		character_maximum_length, numeric_precision, numeric_scale, datetime_precision,
		is_generated, column_default, is_identity
		FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2
		ORDER BY ordinal_position`, ns, tbl)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	t := &schema.Table{Namespace: ns, Name: tbl}
	for rows.Next() {
		var (
			colName, dataType, udt, nullable, generated, identity string
			charLen, prec, scale, dtPrec                          sql.NullInt64
			def                                                   sql.NullString
		)
		if err := rows.Scan(&colName, &dataType, &udt, &nullable, &charLen, &prec, &scale, &dtPrec, &generated, &def, &identity); err != nil {
			return nil, err
		}
		c := schema.Column{
			Name:      colName,
			SQLType:   dataType,
			Nullable:  nullable == "YES",
			Generated: generated == "ALWAYS",
			// A serial's default is its sequence; an identity has none.
			HasDefault: def.Valid || identity == "YES",
		}
		classify(&c, udt, charLen, prec, scale, dtPrec)
		t.Columns = append(t.Columns, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(t.Columns) == 0 {
		return nil, fmt.Errorf("table %s.%s does not exist (or the user cannot see it): create it first; txsink does not create target tables", ns, tbl)
	}
	krows, err := q.QueryContext(ctx, `SELECT a.attname FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
		WHERE i.indrelid = (quote_ident($1) || '.' || quote_ident($2))::regclass AND i.indisprimary
		ORDER BY array_position(i.indkey::int2[], a.attnum)`, ns, tbl)
	if err != nil {
		return nil, err
	}
	defer krows.Close()
	for krows.Next() {
		var k string
		if err := krows.Scan(&k); err != nil {
			return nil, err
		}
		t.PrimaryKey = append(t.PrimaryKey, k)
	}
	return t, krows.Err()
}

func classify(c *schema.Column, udt string, charLen, prec, scale, dtPrec sql.NullInt64) {
	switch udt {
	case "int2":
		c.Class, c.Bits = schema.Int, 16
	case "int4":
		c.Class, c.Bits = schema.Int, 32
	case "int8":
		c.Class, c.Bits = schema.Int, 64
	case "numeric":
		// A numeric without a declared precision keeps any value exactly.
		c.Class, c.Precision, c.Scale = schema.Decimal, int(prec.Int64), int(scale.Int64)
		if !prec.Valid {
			c.Precision, c.Scale = 0, 0
		}
	case "float4":
		c.Class, c.Bits = schema.Float, 32
	case "float8":
		c.Class, c.Bits = schema.Float, 64
	case "bool":
		c.Class = schema.Bool
	case "varchar", "bpchar", "text", "name":
		c.Class, c.Length, c.Fixed = schema.String, int(charLen.Int64), udt == "bpchar"
	case "citext":
		c.Class, c.CaseInsensitive = schema.String, true
	case "bytea":
		c.Class = schema.Bytes
	case "date":
		c.Class = schema.Date
	case "timestamp":
		c.Class, c.FracDigits = schema.DateTime, int(dtPrec.Int64)
	case "timestamptz":
		c.Class, c.FracDigits = schema.Timestamp, int(dtPrec.Int64)
	case "time":
		c.Class, c.FracDigits = schema.Time, int(dtPrec.Int64)
	case "json", "jsonb":
		c.Class = schema.JSON
	default:
		// uuid, inet, enums and the rest take their text form.
		c.Class = schema.Unknown
	}
}
