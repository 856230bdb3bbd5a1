package postgres

import (
	"context"
	"database/sql"
	"strings"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
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
		return nil, &sink.MissingTableError{Table: ns + "." + tbl, Invisible: true}
	}
	if err := compares(ctx, q, t); err != nil {
		return nil, err
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
		// Its comparison (lower() of both sides) is set by compares.
		c.Class = schema.String
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
	case "uuid":
		// Text in, compared by value (any case, dashes optional).
		c.Class, c.Compare.UUID = schema.Unknown, true
	default:
		// inet, enums and the rest take their text form.
		c.Class = schema.Unknown
	}
}

// compares fills in how PostgreSQL compares each text column: character(n)
// ignores trailing spaces; a deterministic collation compares the bytes
// (it breaks ties by them), which txsink reproduces; a nondeterministic
// one is ICU's, which it does not; citext compares lower() of both sides,
// which depends on the collation's LC_CTYPE (see citextFold).
func compares(ctx context.Context, q sqlsink.Querier, t *schema.Table) error {
	rows, err := q.QueryContext(ctx, `SELECT a.attname, t.typname, COALESCE(co.collname, ''),
		COALESCE(co.collisdeterministic, true), COALESCE(co.collprovider::text, ''), COALESCE(co.collctype, ''),
		COALESCE(to_jsonb(d)->>'datlocprovider', 'c'), d.datctype
		FROM pg_attribute a
		JOIN pg_type t ON t.oid = a.atttypid
		LEFT JOIN pg_collation co ON co.oid = a.attcollation
		JOIN pg_database d ON d.datname = current_database()
		WHERE a.attrelid = (quote_ident($1) || '.' || quote_ident($2))::regclass AND a.attnum > 0 AND NOT a.attisdropped`, t.Namespace, t.Name)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var name, typ, coll, provider, ctype, dbProvider, dbCtype string
		var deterministic bool
		if err := rows.Scan(&name, &typ, &coll, &deterministic, &provider, &ctype, &dbProvider, &dbCtype); err != nil {
			return err
		}
		c, ok := t.Column(name)
		if !ok || c.Class != schema.String {
			continue
		}
		cmp := schema.Compare{PadSpace: c.Fixed}
		if coll != "default" {
			cmp.Collation = coll
		}
		if provider == "d" {
			provider, ctype = dbProvider, dbCtype
		}
		switch {
		case !deterministic:
			cmp.Unsupported = "a nondeterministic collation takes texts as equal by ICU's rules"
		case typ == "citext":
			cmp.Collation = "citext"
			cmp.Fold, cmp.Unsupported = citextFold(provider, ctype)
		}
		c.Compare = cmp
	}
	return rows.Err()
}

// citextFold returns how citext's lower() folds under a collation of the
// given provider ("c" libc, "i" ICU, "b" builtin) and LC_CTYPE: ASCII only
// in the C and POSIX locales, by Unicode's simple lower case in a libc
// UTF-8 locale (the case the tests check against the server: glibc's
// C.UTF-8), and a reason it is not reproduced otherwise (ICU's full case
// mapping, or a locale such as Turkish with rules of its own).
func citextFold(provider, ctype string) (schema.Fold, string) {
	lc := strings.ToLower(ctype)
	switch {
	case provider == "c" && (lc == "c" || lc == "posix"):
		return schema.FoldASCII, ""
	case provider == "c" && (strings.HasSuffix(lc, ".utf-8") || strings.HasSuffix(lc, ".utf8")) &&
		!strings.HasPrefix(lc, "tr") && !strings.HasPrefix(lc, "az"):
		return schema.FoldLower, ""
	}
	return schema.FoldNone, "citext's lower() in LC_CTYPE " + ctype + " (provider " + provider + ") is not reproduced"
}
