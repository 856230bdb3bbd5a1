package postgres

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/schema/coltype"
	"github.com/txsink/txsink/sink/sqlsink"
)

var _ sqlsink.TypeMapper = Dialect{}

// maxVarchar is PostgreSQL's longest varchar(n); longer is text.
const maxVarchar = 10485760

// ColumnType declares col on PostgreSQL (see docs/schema.md): unsigned
// integers take the next wider type, JSON stays json (jsonb would
// reorder and deduplicate the document), an enum is text with a CHECK.
func (Dialect) ColumnType(col coltype.Column, quoted string, key bool) (string, error) {
	t := col.Type
	switch t.Kind {
	case coltype.Bool:
		return "boolean", nil
	case coltype.Int:
		bits := t.Bits
		if t.Unsigned {
			bits++
		}
		switch {
		case bits <= 16:
			return "smallint", nil
		case bits <= 32:
			return "integer", nil
		case bits <= 64:
			return "bigint", nil
		}
		return "numeric(20,0)", nil
	case coltype.Float:
		if t.Bits == 32 {
			return "real", nil
		}
		return "double precision", nil
	case coltype.Decimal:
		if t.Precision == 0 || t.Scale == coltype.VariableScale {
			return "numeric", nil
		}
		if t.Precision > 1000 || t.Scale < 0 || t.Scale > t.Precision {
			return "", fmt.Errorf("numeric(p,s) takes a precision of 1 to 1000 and a scale of 0 to p")
		}
		return "numeric(" + strconv.Itoa(t.Precision) + "," + strconv.Itoa(t.Scale) + ")", nil
	case coltype.String:
		switch {
		case t.Fixed && t.Length > 0 && t.Length <= maxVarchar:
			return "character(" + strconv.Itoa(t.Length) + ")", nil
		case t.Length > 0 && t.Length <= maxVarchar:
			return "varchar(" + strconv.Itoa(t.Length) + ")", nil
		}
		return "text", nil
	case coltype.Bytes:
		return "bytea", nil
	case coltype.Date:
		return "date", nil
	case coltype.Time:
		return "time(" + strconv.Itoa(t.Frac) + ")", nil
	case coltype.DateTime:
		return "timestamp(" + strconv.Itoa(t.Frac) + ")", nil
	case coltype.Timestamp:
		return "timestamptz(" + strconv.Itoa(t.Frac) + ")", nil
	case coltype.JSON:
		if key {
			return "", fmt.Errorf("a json column cannot be in a primary key (json has no equality)")
		}
		return "json", nil
	case coltype.UUID:
		return "uuid", nil
	case coltype.Enum:
		return "text " + sqlsink.EnumCheck(quoted, t.Values), nil
	}
	return "", sqlsink.NoColumnType(t)
}

// TableOptions is nothing: PostgreSQL's defaults serve.
func (Dialect) TableOptions() string { return "" }

var _ sqlsink.Literals = Dialect{}

// Literal writes bytes as bytea's hex form and an instant in UTC with
// its zone, so the server reads it as that instant whatever its own
// TimeZone (sqlsink.Literals).
func (Dialect) Literal(_ *schema.Column, v any) (string, bool) {
	switch x := v.(type) {
	case []byte:
		return `'\x` + hex.EncodeToString(x) + `'::bytea`, true
	case time.Time:
		return sqlsink.QuoteLiteral(x.UTC().Format("2006-01-02 15:04:05.999999") + "+00"), true
	}
	return "", false
}

// DefaultClause is the standard one.
func (Dialect) DefaultClause(_, literal string) string { return "DEFAULT " + literal }
