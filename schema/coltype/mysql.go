package coltype

import (
	"slices"
	"strconv"
	"strings"
)

// ParseMySQL reads a MySQL or MariaDB column type as SHOW COLUMNS and
// information_schema.COLUMNS.COLUMN_TYPE write it ("int(11) unsigned",
// "varchar(255)", "decimal(65,30)", "datetime(6)", "enum('a','b')"), the
// form Canal's mysqlType carries. A type it does not know is Unsupported,
// with Why saying so; it never guesses.
//
// TEXT and BLOB types are unbounded (their limits are in bytes, which no
// character length says); TINYINT(1) and BOOL stay 8-bit integers, as
// MySQL stores them; SET is text; YEAR a 16-bit integer; BIT(n) an
// unsigned 64-bit integer.
func ParseMySQL(s string) Type {
	t := Type{Source: s}
	base, args, hasArgs := strings.Cut(strings.TrimSpace(s), "(")
	rest := ""
	if hasArgs {
		end := closing(args)
		if end < 0 {
			return unsupported(t, "its parentheses are not closed")
		}
		args, rest = args[:end], args[end+1:]
	} else if i := strings.IndexByte(base, ' '); i >= 0 {
		base, rest = base[:i], base[i:]
	}
	base = strings.ToLower(strings.TrimSpace(base))
	attrs := strings.Fields(strings.ToLower(rest))
	t.Unsigned = slices.Contains(attrs, "unsigned") || slices.Contains(attrs, "zerofill")
	nums, numsOK := ints(args)
	num := func(i, def int) int {
		if numsOK && i < len(nums) {
			return nums[i]
		}
		return def
	}
	intOf := func(bits int) Type {
		t.Kind, t.Bits = Int, bits
		return t
	}
	switch base {
	case "tinyint", "bool", "boolean":
		return intOf(8)
	case "smallint", "year":
		t.Unsigned = t.Unsigned && base == "smallint"
		return intOf(16)
	case "mediumint":
		return intOf(24)
	case "int", "integer":
		return intOf(32)
	case "bigint":
		return intOf(64)
	case "bit":
		t.Unsigned = true
		return intOf(64)
	case "decimal", "numeric", "dec", "fixed":
		t.Kind, t.Precision, t.Scale = Decimal, num(0, 10), num(1, 0)
		t.Unsigned = false // MySQL's UNSIGNED DECIMAL only refuses negatives
		return t
	case "float":
		t.Kind, t.Bits = Float, 32
		if num(0, 0) > 24 {
			t.Bits = 64
		}
		t.Unsigned = false
		return t
	case "double", "real":
		t.Kind, t.Bits, t.Unsigned = Float, 64, false
		return t
	case "char", "varchar":
		t.Kind, t.Length, t.Fixed = String, num(0, 1), base == "char"
		return t
	case "tinytext", "text", "mediumtext", "longtext", "set", "inet4", "inet6":
		t.Kind = String
		return t
	case "binary", "varbinary":
		t.Kind, t.Length, t.Fixed = Bytes, num(0, 1), base == "binary"
		return t
	case "tinyblob", "blob", "mediumblob", "longblob":
		t.Kind = Bytes
		return t
	case "date":
		t.Kind = Date
		return t
	case "time", "datetime", "timestamp":
		t.Kind, t.Frac = map[string]Kind{"time": Time, "datetime": DateTime, "timestamp": Timestamp}[base], num(0, 0)
		if t.Frac < 0 || t.Frac > MaxFrac {
			return unsupported(t, "its fractional-second precision is not 0 to 6")
		}
		return t
	case "json":
		t.Kind = JSON
		return t
	case "uuid":
		t.Kind = UUID
		return t
	case "enum":
		values, ok := quotedList(args)
		if !ok || len(values) == 0 {
			return unsupported(t, "its value list cannot be read")
		}
		t.Kind, t.Values = Enum, values
		return t
	case "geometry", "point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon", "geometrycollection":
		return unsupported(t, "txsink does not create spatial columns")
	}
	return unsupported(t, "txsink does not know this MySQL type")
}

func unsupported(t Type, why string) Type {
	t.Kind, t.Why = Unsupported, why
	return t
}

// closing returns the index of the parenthesis that closes an argument
// list, quotes respected, or -1.
func closing(args string) int {
	quoted := false
	for i := 0; i < len(args); i++ {
		switch c := args[i]; {
		case c == '\'':
			if quoted && i+1 < len(args) && args[i+1] == '\'' {
				i++
				continue
			}
			quoted = !quoted
		case c == ')' && !quoted:
			return i
		}
	}
	return -1
}

// ints reads "10,2" as [10 2]; ok is false when a part is not a number.
func ints(args string) ([]int, bool) {
	if strings.TrimSpace(args) == "" {
		return nil, true
	}
	var out []int
	for _, p := range strings.Split(args, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

// quotedList reads "'a','b”c'" as [a b'c].
func quotedList(args string) ([]string, bool) {
	var out []string
	for i := 0; i < len(args); {
		for i < len(args) && (args[i] == ' ' || args[i] == ',') {
			i++
		}
		if i == len(args) {
			break
		}
		if args[i] != '\'' {
			return nil, false
		}
		var b strings.Builder
		i++
		for {
			if i >= len(args) {
				return nil, false
			}
			if args[i] == '\'' {
				if i+1 < len(args) && args[i+1] == '\'' {
					b.WriteByte('\'')
					i += 2
					continue
				}
				i++
				break
			}
			b.WriteByte(args[i])
			i++
		}
		out = append(out, b.String())
	}
	return out, true
}
