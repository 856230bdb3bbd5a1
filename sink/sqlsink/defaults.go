package sqlsink

// A column's source default (coltype.Column.Default) as a DEFAULT
// clause: the value is converted for the column's type as a row's value
// would be (package coerce), so a default the column cannot hold exactly
// is refused as a value is, and rendered as the dialect's literal.

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/txsink/txsink/coerce"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/schema/coltype"
)

// Literals is a Dialect whose literals differ from standard SQL's.
type Literals interface {
	// Literal returns v, a converted and bound value of column col
	// (Dialect.Bind's result), as a literal, and false to leave it to
	// the standard rendering.
	Literal(col *schema.Column, v any) (string, bool)
	// DefaultClause returns the DEFAULT clause of literal for a column
	// of type typ (MySQL wants an expression's parentheses for TEXT,
	// BLOB and JSON).
	DefaultClause(typ, literal string) string
}

// defaultClause returns " DEFAULT literal" for c's source default in d,
// "" when c has none, or an error when c's type cannot hold it exactly.
func defaultClause(d Dialect, c coltype.Column, typ string) (string, error) {
	if c.Default == nil {
		return "", nil
	}
	col := targetColumn(c)
	v, err := coerce.Value(col, c.Default)
	if err != nil {
		return "", fmt.Errorf("its default: %w", err)
	}
	v = d.Bind(col, v)
	lit, ok := "", false
	l, custom := d.(Literals)
	if custom {
		lit, ok = l.Literal(col, v)
	}
	if !ok {
		if lit, err = literal(v); err != nil {
			return "", fmt.Errorf("its default: %w", err)
		}
	}
	if custom {
		return " " + l.DefaultClause(typ, lit), nil
	}
	return " DEFAULT " + lit, nil
}

// literal renders a bound value in standard SQL.
func literal(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "NULL", nil
	case bool:
		if x {
			return "TRUE", nil
		}
		return "FALSE", nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case string:
		return QuoteLiteral(x), nil
	case []byte:
		return "X'" + hex.EncodeToString(x) + "'", nil
	case time.Time:
		return QuoteLiteral(x.UTC().Format("2006-01-02 15:04:05.999999")), nil
	}
	return "", fmt.Errorf("txsink cannot write a %T as a literal", v)
}

// kindClass is the class of column each kind is converted for.
var kindClass = map[coltype.Kind]schema.Class{
	coltype.Bool: schema.Bool, coltype.Int: schema.Int, coltype.Float: schema.Float, coltype.Decimal: schema.Decimal,
	coltype.String: schema.String, coltype.Enum: schema.String, coltype.UUID: schema.String, coltype.Bytes: schema.Bytes,
	coltype.Date: schema.Date, coltype.Time: schema.Time, coltype.DateTime: schema.DateTime, coltype.Timestamp: schema.Timestamp,
	coltype.JSON: schema.JSON,
}

// targetColumn is the column c's type declares, as coerce knows columns:
// the class, width, precision, length and fraction it checks a value
// against.
func targetColumn(c coltype.Column) *schema.Column {
	t := c.Type
	col := &schema.Column{Name: c.Name, Class: kindClass[t.Kind], Nullable: true, Bits: t.Bits, Length: t.Length, Fixed: t.Fixed, FracDigits: t.Frac}
	switch {
	case t.Kind == coltype.Int && t.Unsigned:
		col.Class = schema.Uint
	case t.Kind == coltype.Decimal && t.Scale != coltype.VariableScale:
		col.Precision, col.Scale = t.Precision, t.Scale
	}
	return col
}
