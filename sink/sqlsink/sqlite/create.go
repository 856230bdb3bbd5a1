package sqlite

import (
	"strconv"

	"github.com/txsink/txsink/schema/coltype"
	"github.com/txsink/txsink/sink/sqlsink"
)

var _ sqlsink.TypeMapper = Dialect{}

// ColumnType declares col on SQLite (see docs/schema.md). SQLite types
// are affinities, so the declared name is what tells txsink's describe
// the column's class: DATETIME(6) for a date-time, DECIMAL(p,s) for a
// decimal of at most 15 digits (what REAL keeps), TEXT for a longer one
// and for an unsigned 64-bit integer (INTEGER is signed), kept exactly
// as text.
func (Dialect) ColumnType(col coltype.Column, quoted string, key bool) (string, error) {
	t := col.Type
	switch t.Kind {
	case coltype.Bool:
		return "BOOLEAN", nil
	case coltype.Int:
		if t.Unsigned && t.Bits == 64 {
			return "TEXT", nil
		}
		return "INTEGER", nil
	case coltype.Float:
		return "REAL", nil
	case coltype.Decimal:
		if t.Precision > 0 && t.Precision <= sqliteDigits && t.Scale >= 0 && t.Scale <= t.Precision {
			return "DECIMAL(" + strconv.Itoa(t.Precision) + "," + strconv.Itoa(t.Scale) + ")", nil
		}
		return "TEXT", nil
	case coltype.String, coltype.UUID:
		return "TEXT", nil
	case coltype.Bytes:
		return "BLOB", nil
	case coltype.Date:
		return "DATE", nil
	case coltype.Time:
		return "TIME(" + strconv.Itoa(t.Frac) + ")", nil
	case coltype.DateTime:
		return "DATETIME(" + strconv.Itoa(t.Frac) + ")", nil
	case coltype.Timestamp:
		return "TIMESTAMP(" + strconv.Itoa(t.Frac) + ")", nil
	case coltype.JSON:
		return "JSON", nil
	case coltype.Enum:
		return "TEXT " + sqlsink.EnumCheck(quoted, t.Values), nil
	}
	return "", sqlsink.NoColumnType(t)
}

// TableOptions is nothing: a STRICT table would refuse the DATETIME and
// DECIMAL names that tell describe a column's class.
func (Dialect) TableOptions() string { return "" }
