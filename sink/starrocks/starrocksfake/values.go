package starrocksfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// convert checks one source value against its column as a StarRocks load
// does and returns the value to store, or why the value is unqualified. A
// nil raw value is NULL. text is true for a CSV field, whose value is its
// text.
//
// The fake is strict where the documentation says a conversion fails (a
// type mismatch, a number out of its type's range, a string longer in
// bytes than its column): such a value is unqualified. It is strict too
// where the documentation is silent (a DECIMAL value with more fractional
// digits than the scale, a DATETIME with a time zone): the fake refuses
// rather than round, so a test against it never relies on rounding.
func convert(c *Column, raw []byte, text bool) (any, string) {
	if raw == nil || !text && string(raw) == "null" {
		return nil, ""
	}
	var s string
	isString := false
	switch {
	case text:
		s, isString = string(raw), true
	case raw[0] == '"':
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, "malformed JSON string"
		}
		isString = true
	default:
		s = string(raw)
	}
	switch c.Type {
	case "BOOLEAN":
		switch strings.ToLower(s) {
		case "true", "1":
			return 1, ""
		case "false", "0":
			return 0, ""
		}
		return nil, fmt.Sprintf("%q is not a BOOLEAN", s)
	case "TINYINT", "SMALLINT", "INT", "BIGINT":
		bits := map[string]int{"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}[c.Type]
		n, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return nil, fmt.Sprintf("%s is not a %s (out of range or not an integer)", s, c.Type)
		}
		return n, ""
	case "LARGEINT":
		n, ok := new(big.Int).SetString(s, 10)
		lim := new(big.Int).Lsh(big.NewInt(1), 127)
		if !ok || n.CmpAbs(lim) > 0 || n.Cmp(lim) == 0 {
			return nil, fmt.Sprintf("%s is not a LARGEINT", s)
		}
		return n.String(), ""
	case "FLOAT", "DOUBLE":
		bits := 64
		if c.Type == "FLOAT" {
			bits = 32
		}
		f, err := strconv.ParseFloat(s, bits)
		if err != nil {
			return nil, fmt.Sprintf("%s is not a %s", s, c.Type)
		}
		return f, ""
	case "DECIMAL":
		return decimal(c, s)
	case "CHAR", "VARCHAR":
		if !isString && !text && (raw[0] == '{' || raw[0] == '[') {
			var b bytes.Buffer
			if err := json.Compact(&b, raw); err != nil {
				return nil, "malformed JSON"
			}
			s = b.String()
		}
		if len(s) > c.Length {
			// StarRocks counts CHAR and VARCHAR lengths in bytes.
			return nil, fmt.Sprintf("the value is %d bytes, longer than %s(%d) (lengths are in bytes)", len(s), c.Type, c.Length)
		}
		return s, ""
	case "DATE":
		t, err := time.Parse("2006-01-02", s)
		if err != nil {
			return nil, fmt.Sprintf("%q is not a DATE (YYYY-MM-DD)", s)
		}
		return t.Format("2006-01-02"), ""
	case "DATETIME":
		for _, layout := range []string{"2006-01-02 15:04:05.999999", "2006-01-02T15:04:05.999999", "2006-01-02"} {
			if t, err := time.Parse(layout, s); err == nil {
				return t.Format("2006-01-02 15:04:05.000000"), ""
			}
		}
		return nil, fmt.Sprintf("%q is not a DATETIME (YYYY-MM-DD HH:MM:SS[.ffffff], no time zone)", s)
	case "JSON":
		src := raw // from JSON input the value is the JSON node itself
		if text {
			src = []byte(s)
		}
		var b bytes.Buffer
		if err := json.Compact(&b, src); err != nil {
			return nil, "the value is not JSON"
		}
		return b.String(), ""
	}
	return nil, "unknown column type " + c.Type
}

func decimal(c *Column, s string) (any, string) {
	t := strings.TrimLeft(s, "+-")
	if t == "" || strings.ContainsAny(t, "eE") {
		return nil, fmt.Sprintf("%s is not a DECIMAL(%d,%d)", s, c.Precision, c.Scale)
	}
	ip, fp, _ := strings.Cut(t, ".")
	for _, r := range ip + fp {
		if r < '0' || r > '9' {
			return nil, fmt.Sprintf("%s is not a DECIMAL(%d,%d)", s, c.Precision, c.Scale)
		}
	}
	ip = strings.TrimLeft(ip, "0")
	fp = strings.TrimRight(fp, "0")
	if len(ip) > c.Precision-c.Scale {
		return nil, fmt.Sprintf("%s overflows DECIMAL(%d,%d)", s, c.Precision, c.Scale)
	}
	if len(fp) > c.Scale {
		return nil, fmt.Sprintf("%s has more than %d decimals for DECIMAL(%d,%d)", s, c.Scale, c.Precision, c.Scale)
	}
	return s, ""
}

// mariaType is the MariaDB column type that stores a fake column's values
// without loss: every value convert accepts fits.
func mariaType(c *Column) string {
	var t string
	switch c.Type {
	case "BOOLEAN":
		t = "TINYINT(1)"
	case "LARGEINT":
		t = "DECIMAL(39,0)"
	case "DECIMAL":
		t = fmt.Sprintf("DECIMAL(%d,%d)", c.Precision, c.Scale)
	case "CHAR":
		t = fmt.Sprintf("CHAR(%d)", c.Length)
	case "VARCHAR":
		// A byte length of n holds at most n characters.
		switch {
		case c.Length <= 255 || c.Key:
			t = fmt.Sprintf("VARCHAR(%d)", min(c.Length, 768))
		case c.Length <= 65535:
			t = "TEXT"
		default:
			t = "MEDIUMTEXT"
		}
	case "DATETIME":
		t = "DATETIME(6)"
	case "JSON":
		t = "LONGTEXT"
	default:
		t = c.Type
	}
	if c.Type == "CHAR" || c.Type == "VARCHAR" {
		t += " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
	}
	if !c.Nullable {
		t += " NOT NULL"
	}
	return t
}

// starType is the column's type as StarRocks' information_schema.columns
// spells it: DATA_TYPE and COLUMN_TYPE.
func starType(c *Column) (dataType, columnType string) {
	dataType = strings.ToLower(c.Type)
	switch c.Type {
	case "TINYINT":
		return dataType, "tinyint(4)"
	case "SMALLINT":
		return dataType, "smallint(6)"
	case "INT":
		return dataType, "int(11)"
	case "BIGINT":
		return dataType, "bigint(20)"
	case "LARGEINT":
		return dataType, "largeint(40)"
	case "DECIMAL":
		return dataType, fmt.Sprintf("decimal(%d,%d)", c.Precision, c.Scale)
	case "CHAR", "VARCHAR":
		return dataType, fmt.Sprintf("%s(%d)", dataType, c.Length)
	}
	return dataType, dataType
}
