package native

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format/internal/jsonscan"
)

// Append appends c to dst as one txsink-json line, '\n' included, and
// returns the extended buffer. On error dst is returned unchanged in length
// (its spare capacity may have been written).
//
// Values are written as JSON: nil as null, bool, changelog.Number as its
// text (it must be a JSON number), string, []byte as a string (it must be
// UTF-8 text: the format has no binary type), changelog.JSON compacted onto
// the line, and Go integers and floats as numbers (not NaN or ±Inf).
//
// A changelog.Truncate is written as op "TRUNCATE" with no "row".
//
// Append refuses what Decode could not read back the same: an invalid kind,
// an empty table name, a namespace containing '.', a name containing '.'
// without a namespace, an empty row image (but for a TRUNCATE), a column named twice, and strings
// that are not valid UTF-8. Before is written only for +U (as "before"), and
// only when it has columns.
func Append(dst []byte, c *changelog.Change) ([]byte, error) {
	return AppendTyped(dst, c, nil)
}

// AppendTyped is Append with a "types" member, types being its JSON text
// as AppendTypes wrote it (nil: none). The text is written as it is.
func AppendTyped(dst []byte, c *changelog.Change, types []byte) ([]byte, error) {
	out, err := appendChange(dst, c, types)
	if err != nil {
		return dst, fmt.Errorf("txsink-json: encode %s change of table %s: %w", c.Kind, c.Table, err)
	}
	return out, nil
}

func appendChange(b []byte, c *changelog.Change, types []byte) ([]byte, error) {
	switch c.Kind {
	case changelog.Insert, changelog.UpdateAfter, changelog.UpdateBefore, changelog.Delete, changelog.Truncate:
	default:
		return b, fmt.Errorf("invalid kind %s", c.Kind)
	}
	switch {
	case c.Table.Name == "":
		return b, errors.New("empty table name")
	case strings.Contains(c.Table.Namespace, "."):
		return b, errors.New("namespace contains '.', which the \"table\" field cannot express")
	case c.Table.Namespace == "" && strings.Contains(c.Table.Name, "."):
		return b, errors.New("table name contains '.' but has no namespace, so it would read back as namespace.name")
	}
	row := c.Image()
	if row.IsZero() && c.Kind != changelog.Truncate {
		return b, errors.New("empty row image")
	}
	b = append(b, `{"op":"`...)
	b = append(b, c.Kind.String()...)
	b = append(b, `","table":`...)
	b, _ = appendString(b, c.Table.String())
	var err error
	if c.Kind != changelog.Truncate {
		// A TRUNCATE names its table and holds no row.
		b = append(b, `,"row":`...)
		if b, err = appendRow(b, row); err != nil {
			return b, fmt.Errorf("row: %w", err)
		}
	}
	if c.Kind == changelog.UpdateAfter && !c.Before.IsZero() {
		b = append(b, `,"before":`...)
		if b, err = appendRow(b, c.Before); err != nil {
			return b, fmt.Errorf("before: %w", err)
		}
	}
	if c.TxnID != "" {
		b = append(b, `,"txn":`...)
		if b, err = appendString(b, c.TxnID); err != nil {
			return b, fmt.Errorf("txn: %w", err)
		}
	}
	if c.TxnEnd {
		b = append(b, `,"txn_end":true`...)
	}
	if types != nil {
		b = append(b, `,"types":`...)
		b = append(b, types...)
	}
	return append(b, '}', '\n'), nil
}

func appendRow(b []byte, r changelog.Row) ([]byte, error) {
	if len(r.Names) != len(r.Values) {
		return b, fmt.Errorf("row has %d names but %d values", len(r.Names), len(r.Values))
	}
	if name, dup := jsonscan.Duplicate(r.Names); dup {
		return b, fmt.Errorf("column %q appears twice", name)
	}
	b = append(b, '{')
	for i, name := range r.Names {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendString(b, name); err != nil {
			return b, fmt.Errorf("column name: %w", err)
		}
		b = append(b, ':')
		if b, err = appendValue(b, r.Values[i]); err != nil {
			return b, fmt.Errorf("column %q: %w", name, err)
		}
	}
	return append(b, '}'), nil
}

func appendValue(b []byte, v changelog.Value) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case changelog.Number:
		if !jsonscan.IsNumber(string(x)) {
			return b, fmt.Errorf("Number %q is not a JSON number", truncate(string(x)))
		}
		return append(b, x...), nil
	case string:
		return appendString(b, x)
	case []byte:
		if !utf8.Valid(x) {
			return b, errors.New("binary value is not UTF-8 text; txsink-json has no binary type")
		}
		return appendString(b, string(x))
	case changelog.JSON:
		var buf bytes.Buffer
		if err := json.Compact(&buf, x); err != nil {
			return b, fmt.Errorf("invalid JSON value: %w", err)
		}
		if c := buf.Bytes(); len(c) == 0 || (c[0] != '{' && c[0] != '[') {
			return b, errors.New("JSON value must be an object or array")
		}
		return append(b, buf.Bytes()...), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int8:
		return strconv.AppendInt(b, int64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case uint:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint16:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint8:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case float64:
		return appendFloat(b, x, 64)
	case float32:
		return appendFloat(b, float64(x), 32)
	}
	return b, fmt.Errorf("unsupported value type %T", v)
}

// appendFloat writes the shortest text that reads back as the same float
// of the given size.
func appendFloat(b []byte, f float64, bits int) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, fmt.Errorf("%v has no JSON form", f)
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits), nil
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// appendString writes s as a JSON string. Only what JSON requires is
// escaped; invalid UTF-8 is an error rather than silently replaced.
func appendString(b []byte, s string) ([]byte, error) {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				return b, fmt.Errorf("string %q is not valid UTF-8", truncate(s))
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			const hex = "0123456789abcdef"
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"'), nil
}
