package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink/sqlsink"
)

var _ sqlsink.ColumnModifier = Dialect{}

// WidenedType returns cur's type with to's wider parameters
// (sqlsink.ColumnModifier): smallint, integer or bigint; numeric(p,s);
// varchar(n) or character(n); time, timestamp or timestamptz with more
// fractional digits.
func (Dialect) WidenedType(cur, to schema.Column) (string, error) {
	frac := "(" + strconv.Itoa(to.FracDigits) + ")"
	switch {
	case to.Class == schema.Int:
		switch {
		case to.Bits <= 16:
			return "smallint", nil
		case to.Bits <= 32:
			return "integer", nil
		case to.Bits <= 64:
			return "bigint", nil
		}
	case to.Class == schema.Decimal:
		return "numeric(" + strconv.Itoa(to.Precision) + "," + strconv.Itoa(to.Scale) + ")", nil
	case to.Class == schema.String && cur.SQLType == "character varying":
		return "varchar(" + strconv.Itoa(to.Length) + ")", nil
	case to.Class == schema.String && cur.SQLType == "character":
		return "character(" + strconv.Itoa(to.Length) + ")", nil
	case to.Class == schema.Time && cur.SQLType == "time with time zone":
		return "time" + frac + " with time zone", nil
	case to.Class == schema.Time:
		return "time" + frac, nil
	case to.Class == schema.DateTime:
		return "timestamp" + frac, nil
	case to.Class == schema.Timestamp:
		return "timestamptz" + frac, nil
	}
	return "", fmt.Errorf("a %s column is not widened", cur.SQLType)
}

// ModifyColumn returns ALTER TABLE … ALTER COLUMN … TYPE giving column
// cur the type typ (sqlsink.ColumnModifier). PostgreSQL keeps the
// column's NOT NULL and default; its collation is restated, since TYPE
// without COLLATE gives the new type's default one.
func (d Dialect) ModifyColumn(ctx context.Context, q sqlsink.Querier, name schema.Name, cur schema.Column, typ string) (string, error) {
	var ns, coll string
	err := q.QueryRowContext(ctx, `SELECT cn.nspname, co.collname FROM pg_attribute a
		JOIN pg_type ty ON ty.oid = a.atttypid
		JOIN pg_collation co ON co.oid = a.attcollation
		JOIN pg_namespace cn ON cn.oid = co.collnamespace
		WHERE a.attrelid = (quote_ident(COALESCE(NULLIF($1, ''), current_schema())) || '.' || quote_ident($2))::regclass
		AND a.attname = $3 AND a.attcollation <> ty.typcollation`, name.Namespace, name.Name, cur.Name).Scan(&ns, &coll)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return "", err
	default:
		typ += " COLLATE " + d.Quote(ns) + "." + d.Quote(coll)
	}
	return "ALTER TABLE " + sqlsink.QuotedTable(d, &schema.Table{Namespace: name.Namespace, Name: name.Name}) +
		" ALTER COLUMN " + d.Quote(cur.Name) + " TYPE " + typ, nil
}
