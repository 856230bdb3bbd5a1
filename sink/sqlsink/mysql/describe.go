package mysql

import (
	"context"
	"database/sql"
	"strings"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/sink/sqlsink"
)

// Describe reads name from information_schema: the table name.Name of
// database name.Namespace, or of the connection's database when that is "".
func (d *Dialect) Describe(ctx context.Context, q sqlsink.Querier, name schema.Name) (*schema.Table, error) {
	ns, tbl := name.Namespace, name.Name
	if ns == "" {
		if err := q.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&ns); err != nil {
			return nil, err
		}
	}
	rows, err := q.QueryContext(ctx, `SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE,
		CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE, DATETIME_PRECISION,
		COALESCE(COLLATION_NAME, ''), EXTRA, COLUMN_DEFAULT IS NOT NULL
		FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?
		ORDER BY ORDINAL_POSITION`, ns, tbl)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	t := &schema.Table{Namespace: ns, Name: tbl}
	for rows.Next() {
		var (
			colName, dataType, colType, nullable, collation, extra string
			charLen, prec, scale, dtPrec                           sql.NullInt64
			hasDefault                                             bool
		)
		if err := rows.Scan(&colName, &dataType, &colType, &nullable, &charLen, &prec, &scale, &dtPrec, &collation, &extra, &hasDefault); err != nil {
			return nil, err
		}
		c := schema.Column{
			Name:       colName,
			SQLType:    colType,
			Nullable:   nullable == "YES",
			Generated:  generated(extra),
			HasDefault: hasDefault || strings.Contains(strings.ToLower(extra), "auto_increment"),
		}
		classify(&c, strings.ToLower(dataType), strings.ToLower(colType), charLen.Int64, int(prec.Int64), int(scale.Int64), int(dtPrec.Int64))
		switch {
		case c.Class == schema.String:
			c.Compare = compareOf(collation, c.Fixed)
		case strings.EqualFold(dataType, "uuid"):
			// MariaDB 10.7+'s UUID type takes any case, with or
			// without dashes, and compares by value.
			c.Compare.UUID = true
		}
		t.Columns = append(t.Columns, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(t.Columns) == 0 {
		return nil, &sink.MissingTableError{Table: ns + "." + tbl, Invisible: true}
	}
	krows, err := q.QueryContext(ctx, `SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY ORDINAL_POSITION`, ns, tbl)
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
	if err := krows.Err(); err != nil {
		return nil, err
	}
	if d.MariaDB {
		// MariaDB's JSON is LONGTEXT with a json_valid() check; the check
		// is how to tell it is JSON.
		if err := markJSON(ctx, q, t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func markJSON(ctx context.Context, q sqlsink.Querier, t *schema.Table) error {
	rows, err := q.QueryContext(ctx, `SELECT CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS
		WHERE CONSTRAINT_SCHEMA = ? AND TABLE_NAME = ?`, t.Namespace, t.Name)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var clause string
		if err := rows.Scan(&clause); err != nil {
			return err
		}
		for i := range t.Columns {
			c := &t.Columns[i]
			if c.Class == schema.String && strings.EqualFold(strings.ReplaceAll(clause, " ", ""), "json_valid(`"+c.Name+"`)") {
				c.Class = schema.JSON
			}
		}
	}
	return rows.Err()
}

func classify(c *schema.Column, dataType, colType string, charLen int64, prec, scale, dtPrec int) {
	unsigned := strings.Contains(colType, "unsigned")
	intOf := func(bits int) {
		c.Class, c.Bits = schema.Int, bits
		if unsigned {
			c.Class = schema.Uint
		}
	}
	switch dataType {
	case "tinyint":
		intOf(8)
	case "smallint", "year":
		intOf(16)
	case "mediumint":
		intOf(24)
	case "int", "integer":
		intOf(32)
	case "bigint":
		intOf(64)
	case "decimal", "numeric":
		c.Class, c.Precision, c.Scale = schema.Decimal, prec, scale
	case "float":
		c.Class, c.Bits = schema.Float, 32
	case "double", "real":
		c.Class, c.Bits = schema.Float, 64
	case "char", "varchar":
		c.Class, c.Length, c.Fixed = schema.String, int(charLen), dataType == "char"
	case "tinytext", "text", "mediumtext", "longtext", "enum", "set":
		// TEXT limits are in bytes, not characters; strict mode makes the
		// server refuse an over-long value rather than cut it.
		c.Class = schema.String
	case "binary", "varbinary":
		c.Class, c.Length, c.Fixed = schema.Bytes, int(charLen), dataType == "binary"
	case "tinyblob", "blob", "mediumblob", "longblob":
		c.Class = schema.Bytes
	case "date":
		c.Class = schema.Date
	case "datetime":
		c.Class, c.FracDigits = schema.DateTime, dtPrec
	case "timestamp":
		c.Class, c.FracDigits = schema.Timestamp, dtPrec
	case "time":
		c.Class, c.FracDigits = schema.Time, dtPrec
	case "json":
		c.Class = schema.JSON
	case "boolean", "bool":
		c.Class = schema.Bool
	default:
		c.Class = schema.Unknown
	}
}

// generated reports whether an information_schema EXTRA value marks a
// generated column: "VIRTUAL GENERATED" or "STORED GENERATED" on MySQL,
// "VIRTUAL GENERATED"/"PERSISTENT GENERATED"/"STORED GENERATED" on MariaDB.
// MySQL 8 also writes "DEFAULT_GENERATED" for a column whose DEFAULT is an
// expression; that column is written like any other.
func generated(extra string) bool {
	for _, w := range strings.Fields(strings.ToUpper(extra)) {
		if w == "GENERATED" {
			return true
		}
	}
	return false
}
