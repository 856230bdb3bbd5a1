package starrocks

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/schema"
)

// The table kinds, as information_schema.tables_config's TABLE_MODEL
// spells them.
const (
	PrimaryKeys   = "PRI_KEYS"
	DuplicateKeys = "DUP_KEYS"
	UniqueKeys    = "UNQ_KEYS"
	AggregateKeys = "AGG_KEYS"
)

var modelNames = map[string]string{PrimaryKeys: "Primary Key", DuplicateKeys: "Duplicate Key", UniqueKeys: "Unique Key", AggregateKeys: "Aggregate"}

// Querier is what reading the catalog needs: a *sql.DB, *sql.Conn or
// *sql.Tx on the FE's MySQL-protocol port (9030).
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Table is a StarRocks table as its catalog describes it: the schema.Table
// the rest of txsink converts values for, and what only StarRocks has.
type Table struct {
	schema.Table
	// Model is the table's kind: PrimaryKeys, DuplicateKeys, UniqueKeys
	// or AggregateKeys.
	Model string
	// ByteLength holds, by column name, the length of each CHAR and
	// VARCHAR column. StarRocks counts it in bytes; schema.Column.Length
	// (characters) holds the same number, which is necessary, not
	// sufficient: EncodeBatch checks the bytes.
	ByteLength map[string]int
}

// TakesDeletes reports whether the table applies deletes: only a Primary
// Key table takes __op = 1.
func (t *Table) TakesDeletes() bool { return t.Model == PrimaryKeys }

// DescribeError is a table the catalog does not have, or cannot serve.
type DescribeError struct {
	Table string
	Msg   string
	Err   error
}

// Error names the table and what to do.
func (e *DescribeError) Error() string {
	s := "starrocks describe table " + e.Table + ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the query's error.
func (e *DescribeError) Unwrap() error { return e.Err }

// Kind is Permanent: the table's shape or the configuration must change.
func (e *DescribeError) Kind() errkind.Kind { return errkind.Permanent }

// Where names the table.
func (e *DescribeError) Where() errkind.Where { return errkind.Where{Table: e.Table} }

var ident = regexp.MustCompile(`^[A-Za-z0-9_$-]+$`)

// Describe reads table of database db from the catalog: the columns of
// catalog.columns and the model of catalog.tables_config. catalog is
// "information_schema" on a real cluster (the fake's is
// starrocksfake.Fake.CatalogSchema). The key is the columns the catalog
// marks (COLUMN_KEY), in column order, for they lead the table.
// schema.Table.PrimaryKey holds it for Primary Key and Unique Key tables,
// whose loads replace rows by it; it is empty for Duplicate Key tables,
// which append.
func Describe(ctx context.Context, q Querier, catalog, db, table string) (*Table, error) {
	name := db + "." + table
	if !ident.MatchString(catalog) {
		return nil, &DescribeError{Table: name, Msg: fmt.Sprintf("catalog schema %q is not a plain name", catalog)}
	}
	t := &Table{Table: schema.Table{Namespace: db, Name: table}, ByteLength: map[string]int{}}
	err := q.QueryRowContext(ctx, "SELECT TABLE_MODEL FROM "+catalog+".tables_config WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", db, table).Scan(&t.Model)
	if err == sql.ErrNoRows {
		return nil, &DescribeError{Table: name, Msg: "no such table in the catalog; create it (a PRIMARY KEY table for a stream with updates and deletes)"}
	}
	if err != nil {
		return nil, &DescribeError{Table: name, Msg: "reading " + catalog + ".tables_config", Err: err}
	}
	t.Model = strings.ToUpper(t.Model)
	rows, err := q.QueryContext(ctx, "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE, COLUMN_KEY FROM "+
		catalog+".columns WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION", db, table)
	if err != nil {
		return nil, &DescribeError{Table: name, Msg: "reading " + catalog + ".columns", Err: err}
	}
	defer rows.Close()
	var key []string
	for rows.Next() {
		var colName, dataType, colType, nullable, colKey string
		var length, prec, scale sql.NullInt64
		if err := rows.Scan(&colName, &dataType, &colType, &nullable, &length, &prec, &scale, &colKey); err != nil {
			return nil, &DescribeError{Table: name, Msg: "reading " + catalog + ".columns", Err: err}
		}
		c := column(colName, strings.ToLower(dataType), strings.ToLower(colType), length, prec, scale)
		c.Nullable = strings.EqualFold(nullable, "YES")
		if c.Class == schema.String {
			t.ByteLength[c.Name] = c.Length
			c.LengthInBytes = true
		}
		if colKey != "" {
			key = append(key, c.Name)
		}
		t.Columns = append(t.Columns, c)
	}
	if err := rows.Err(); err != nil {
		return nil, &DescribeError{Table: name, Msg: "reading " + catalog + ".columns", Err: err}
	}
	if len(t.Columns) == 0 {
		return nil, &DescribeError{Table: name, Msg: "the catalog lists no columns for it"}
	}
	if t.Model == PrimaryKeys || t.Model == UniqueKeys {
		t.PrimaryKey = key
	}
	return t, nil
}

var typeArgs = regexp.MustCompile(`\((\d+)(?:,\s*(\d+))?\)`)

// column maps a StarRocks type to the schema's classes. Text compares byte
// for byte in StarRocks, the zero Compare.
func column(name, dataType, colType string, length, prec, scale sql.NullInt64) schema.Column {
	c := schema.Column{Name: name, SQLType: colType}
	args := typeArgs.FindStringSubmatch(colType)
	arg := func(i int, v sql.NullInt64) int {
		if v.Valid {
			return int(v.Int64)
		}
		if args != nil && args[i] != "" {
			n, _ := strconv.Atoi(args[i])
			return n
		}
		return 0
	}
	switch dataType {
	case "boolean":
		c.Class = schema.Bool
	case "tinyint", "smallint", "int", "bigint":
		c.Class, c.Bits = schema.Int, map[string]int{"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}[dataType]
	case "largeint":
		// 128 bits: txsink checks it as 39 digits; the server refuses
		// what lies beyond 2^127 (a filtered row, bad input).
		c.Class, c.Precision = schema.Decimal, 39
	case "float":
		c.Class, c.Bits = schema.Float, 32
	case "double":
		c.Class, c.Bits = schema.Float, 64
	case "decimal", "decimalv2", "decimal32", "decimal64", "decimal128", "decimal256":
		c.Class, c.Precision, c.Scale = schema.Decimal, arg(1, prec), arg(2, scale)
	case "char", "varchar", "string":
		c.Class, c.Length, c.Fixed = schema.String, arg(1, length), dataType == "char"
		if c.Length == 0 {
			c.Length = 65533 // STRING
		}
	case "date":
		c.Class = schema.Date
	case "datetime":
		c.Class, c.FracDigits = schema.DateTime, 6
	case "json":
		c.Class = schema.JSON
	default:
		c.Class = schema.Unknown
	}
	return c
}

// RefuseChanges says why table cannot take a stream with updates or
// deletes, in StarRocks' terms, or nil when it can: only a Primary Key
// table applies deletes, an Aggregate table's loads aggregate instead of
// replacing, and a Unique Key table cannot delete.
func (t *Table) RefuseChanges(deletes bool) error {
	kind := modelNames[t.Model]
	if kind == "" {
		kind = t.Model
	}
	switch {
	case t.Model == AggregateKeys:
		return &DescribeError{Table: t.String(), Msg: "an Aggregate table (AGG_KEYS) aggregates loads instead of replacing rows; txsink writes Primary Key tables (and inserts into Duplicate Key ones)"}
	case deletes && !t.TakesDeletes():
		return &DescribeError{Table: t.String(), Msg: "a " + kind + " table (" + t.Model + ") cannot take deletes: StarRocks applies __op = 1 only to Primary Key tables; recreate it with PRIMARY KEY, or route only inserts to it"}
	}
	return nil
}
