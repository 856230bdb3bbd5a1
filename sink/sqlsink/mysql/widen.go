package mysql

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink/sqlsink"
)

var _ sqlsink.ColumnModifier = (*Dialect)(nil)

// WidenedType returns cur's type with to's wider parameters, in the
// catalog's spelling (sqlsink.ColumnModifier): INT(11) UNSIGNED becomes
// BIGINT UNSIGNED, varchar(5) varchar(10), decimal(10,2) decimal(12,2),
// datetime(3) datetime(6); what follows the parameters (UNSIGNED,
// ZEROFILL) is kept.
func (d *Dialect) WidenedType(cur, to schema.Column) (string, error) {
	t := strings.ToLower(cur.SQLType)
	base, suffix := t, ""
	if i := strings.IndexAny(t, "( "); i >= 0 {
		base, suffix = t[:i], t[i:]
		if suffix[0] == '(' {
			_, after, ok := strings.Cut(suffix, ")")
			if !ok {
				return "", fmt.Errorf("cannot read the type %s", cur.SQLType)
			}
			suffix = after
		}
	}
	args := ""
	switch to.Class {
	case schema.Int, schema.Uint:
		base = strings.ToLower(map[int]string{8: "TINYINT", 16: "SMALLINT", 24: "MEDIUMINT", 32: "INT", 64: "BIGINT"}[to.Bits])
		if base == "" {
			return "", fmt.Errorf("no integer type has %d bits", to.Bits)
		}
	case schema.Decimal:
		if to.Precision > maxDecimalDigits {
			return "", fmt.Errorf("DECIMAL holds at most %d digits", maxDecimalDigits)
		}
		args = "(" + strconv.Itoa(to.Precision) + "," + strconv.Itoa(to.Scale) + ")"
	case schema.String, schema.Bytes:
		limit := map[string]int{"varchar": maxVarchar, "char": 255, "varbinary": 65535, "binary": 255}[base]
		if limit == 0 {
			return "", fmt.Errorf("a %s column has no length to widen", base)
		}
		if to.Length > limit {
			return "", fmt.Errorf("%s holds at most %d (a longer one is another type: TEXT or BLOB)", strings.ToUpper(base), limit)
		}
		args = "(" + strconv.Itoa(to.Length) + ")"
	case schema.Time, schema.DateTime, schema.Timestamp:
		args = "(" + strconv.Itoa(to.FracDigits) + ")"
	default:
		return "", fmt.Errorf("a %s column is not widened", to.Class)
	}
	return base + args + suffix, nil
}

// charsetClause matches the CHARACTER SET and COLLATE clauses of a
// column definition in SHOW CREATE TABLE.
var charsetClause = regexp.MustCompile(` (CHARACTER SET|COLLATE) [0-9A-Za-z_]+`)

// ModifyColumn returns ALTER TABLE … MODIFY COLUMN giving column cur the
// type typ (sqlsink.ColumnModifier). MODIFY restates the whole column, so
// the rest of its definition is SHOW CREATE TABLE's, as the server
// writes it: NOT NULL, DEFAULT, ON UPDATE, AUTO_INCREMENT, COMMENT and
// the character set and collation are kept (the latter two replaced
// when typ names its own).
func (d *Dialect) ModifyColumn(ctx context.Context, q sqlsink.Querier, name schema.Name, cur schema.Column, typ string) (string, error) {
	table := sqlsink.QuotedTable(d, &schema.Table{Namespace: name.Namespace, Name: name.Name})
	var tname, create string
	if err := q.QueryRowContext(ctx, "SHOW CREATE TABLE "+table).Scan(&tname, &create); err != nil {
		return "", err
	}
	prefix := d.Quote(cur.Name) + " "
	for _, line := range strings.Split(create, "\n") {
		def, ok := strings.CutPrefix(strings.TrimSpace(line), prefix)
		if !ok {
			continue
		}
		def = strings.TrimSuffix(def, ",")
		if len(def) < len(cur.SQLType) || !strings.EqualFold(def[:len(cur.SQLType)], cur.SQLType) {
			return "", fmt.Errorf("SHOW CREATE TABLE declares the column %s, not as its type %s", def, cur.SQLType)
		}
		rest := def[len(cur.SQLType):]
		if strings.Contains(strings.ToUpper(typ), "CHARACTER SET") {
			rest = charsetClause.ReplaceAllString(rest, "")
		}
		return "ALTER TABLE " + table + " MODIFY COLUMN " + d.Quote(cur.Name) + " " + typ + rest, nil
	}
	return "", fmt.Errorf("SHOW CREATE TABLE shows no column %s", cur.Name)
}
