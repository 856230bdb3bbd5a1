package mysql

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/schema/coltype"
	"github.com/txsink/txsink/sink/sqlsink"
)

// The limits of MySQL's and MariaDB's types that the mapping meets.
const (
	maxDecimalDigits = 65
	maxDecimalScale  = 30
	// maxVarchar is the longest VARCHAR of utf8mb4 text a row can hold
	// (65,535 bytes a row, 4 a character); longer strings are TEXT types.
	maxVarchar = 16383
	// keyChars is the length of an unbounded string in a primary key:
	// InnoDB keys on at most 3,072 bytes, so three such columns fit.
	keyChars = 255
)

var _ sqlsink.TypeMapper = (*Dialect)(nil)

// ColumnType declares col on MySQL or MariaDB (see docs/schema.md):
// text is utf8mb4 with the binary collation, so every character fits
// and keys compare as the source's bytes; an instant is a DATETIME in
// UTC, because TIMESTAMP stops in 2038.
func (d *Dialect) ColumnType(col coltype.Column, _ string, key bool) (string, error) {
	t := col.Type
	switch t.Kind {
	case coltype.Bool:
		return "BOOLEAN", nil
	case coltype.Int:
		name := map[int]string{8: "TINYINT", 16: "SMALLINT", 24: "MEDIUMINT", 32: "INT", 64: "BIGINT"}[t.Bits]
		if name == "" {
			return "", fmt.Errorf("no integer type has %d bits", t.Bits)
		}
		if t.Unsigned {
			name += " UNSIGNED"
		}
		return name, nil
	case coltype.Float:
		if t.Bits == 32 {
			return "FLOAT", nil
		}
		return "DOUBLE", nil
	case coltype.Decimal:
		p, s := t.Precision, t.Scale
		switch {
		case s == coltype.VariableScale:
			p, s = maxDecimalDigits, maxDecimalScale
		case p == 0:
			p = maxDecimalDigits
		}
		if s < 0 || s > maxDecimalScale || p > maxDecimalDigits || s > p {
			return "", fmt.Errorf("DECIMAL holds at most %d digits, %d of them after the point", maxDecimalDigits, maxDecimalScale)
		}
		return "DECIMAL(" + strconv.Itoa(p) + "," + strconv.Itoa(s) + ")", nil
	case coltype.String:
		return stringType(t, key) + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", nil
	case coltype.Bytes:
		switch {
		case t.Fixed && t.Length > 0 && t.Length <= 255:
			return "BINARY(" + strconv.Itoa(t.Length) + ")", nil
		case t.Length > 0 && t.Length <= 65535:
			return "VARBINARY(" + strconv.Itoa(t.Length) + ")", nil
		case key:
			return "VARBINARY(" + strconv.Itoa(keyChars*4) + ")", nil
		}
		return "LONGBLOB", nil
	case coltype.Date:
		return "DATE", nil
	case coltype.Time:
		return "TIME(" + strconv.Itoa(t.Frac) + ")", nil
	case coltype.DateTime, coltype.Timestamp:
		return "DATETIME(" + strconv.Itoa(t.Frac) + ")", nil
	case coltype.JSON:
		if key {
			return "", fmt.Errorf("a JSON column cannot be in a primary key")
		}
		return "JSON", nil
	case coltype.UUID:
		return "CHAR(36) CHARACTER SET ascii COLLATE ascii_bin", nil
	case coltype.Enum:
		lits := make([]string, len(t.Values))
		for i, v := range t.Values {
			// Sessions run without NO_BACKSLASH_ESCAPES.
			lits[i] = sqlsink.QuoteLiteral(strings.ReplaceAll(v, `\`, `\\`))
		}
		return "ENUM(" + strings.Join(lits, ",") + ") CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", nil
	}
	return "", sqlsink.NoColumnType(t)
}

// stringType declares text of t's length.
func stringType(t coltype.Type, key bool) string {
	switch {
	case t.Fixed && t.Length > 0 && t.Length <= 255:
		return "CHAR(" + strconv.Itoa(t.Length) + ")"
	case t.Length > 0 && t.Length <= maxVarchar:
		return "VARCHAR(" + strconv.Itoa(t.Length) + ")"
	case key:
		return "VARCHAR(" + strconv.Itoa(keyChars) + ")"
	case t.Length > 0 && t.Length <= 4194303:
		return "MEDIUMTEXT"
	}
	return "LONGTEXT"
}

// TableOptions makes the table InnoDB (transactions, the progress
// table's engine) with utf8mb4 text.
func (d *Dialect) TableOptions() string {
	return "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"
}

var _ sqlsink.Literals = (*Dialect)(nil)

// Literal writes a string with its backslashes doubled: sessions run
// without NO_BACKSLASH_ESCAPES (sqlsink.Literals).
func (d *Dialect) Literal(_ *schema.Column, v any) (string, bool) {
	if s, ok := v.(string); ok {
		return sqlsink.QuoteLiteral(strings.ReplaceAll(s, `\`, `\\`)), true
	}
	return "", false
}

// DefaultClause puts a default of a TEXT, BLOB or JSON column in
// parentheses, as an expression: MySQL 8 takes no literal default there
// (MariaDB takes both).
func (d *Dialect) DefaultClause(typ, literal string) string {
	u := strings.ToUpper(typ)
	if strings.Contains(u, "TEXT") || strings.Contains(u, "BLOB") || strings.HasPrefix(u, "JSON") {
		return "DEFAULT (" + literal + ")"
	}
	return "DEFAULT " + literal
}
