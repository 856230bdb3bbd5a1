// Package collate turns a key value into the form its target compares:
// two values of a column that the target takes as one key give the same
// bytes, and two it tells apart give different bytes. Package reduce keys
// its buffer by that form, so a flush merges exactly the changes the
// target would apply to one row, whatever the batching.
//
// The forms, by column (schema.Column and its Compare):
//
//	Decimal            by value: 1.5, 1.50 and 1.500 are one key; -0.0 is 0
//	Float              by value: -0 is 0
//	UUID (Compare.UUID) canonical text: lower case, with dashes, no braces
//	String             Compare.PadSpace drops trailing spaces (U+0020 only);
//	                   then Compare.Fold: ASCII (A–Z only), Lower (simple
//	                   lower case per character) or GeneralCI (MariaDB's
//	                   utf8mb4_general_ci weights, read from the server)
//	anything else      the value as coerce.Value returned it
//
// A comparison txsink cannot reproduce exactly (Compare.Unsupported) is
// never approximated here: package reduce refuses such a key column.
//
// It is pure: no I/O, no state beyond a table built once, safe for
// concurrent use.
package collate

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/txsink/txsink/schema"
)

// Exact reports whether values of col that the target compares equal are
// always identical as coerce.Value returns them, so a key of col needs no
// comparison form and an upsert need not rewrite it: integers, dates,
// times, binary data, text under a binary collation without padding.
func Exact(col *schema.Column) bool {
	switch col.Class {
	case schema.Decimal, schema.Float:
		return false
	case schema.String:
		return col.Compare.Fold == schema.FoldNone && !col.Compare.PadSpace
	}
	return !col.Compare.UUID
}

// AppendKey appends the comparison form of v, a value coerce.Value
// returned for col, to dst.
func AppendKey(dst []byte, col *schema.Column, v any) []byte {
	switch x := v.(type) {
	case string:
		switch {
		case col.Class == schema.Decimal:
			return appendDecimal(dst, x)
		case col.Compare.UUID:
			return appendUUID(dst, x)
		}
		return AppendText(dst, &col.Compare, x)
	case float64:
		if x == 0 {
			v = 0.0 // -0 is 0
		}
	}
	return AppendValue(dst, v)
}

// AppendValue appends v, a value coerce.Value returned, as it is: the
// comparison form of a value of a column for which Exact holds, and the
// cheaper one to compute.
func AppendValue(dst []byte, v any) []byte {
	switch x := v.(type) {
	case string:
		return append(dst, x...)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case uint64:
		return strconv.AppendUint(dst, x, 10)
	case float64:
		return strconv.AppendFloat(dst, x, 'g', -1, 64)
	case []byte:
		return append(dst, x...)
	case time.Time:
		return x.UTC().AppendFormat(dst, time.RFC3339Nano)
	case bool:
		return strconv.AppendBool(dst, x)
	}
	return fmt.Append(dst, v)
}

// AppendText appends the comparison form of text s under c.
func AppendText(dst []byte, c *schema.Compare, s string) []byte {
	if c.PadSpace {
		s = strings.TrimRight(s, " ")
	}
	switch c.Fold {
	case schema.FoldASCII:
		start := len(dst)
		dst = append(dst, s...)
		for i := start; i < len(dst); i++ {
			if b := dst[i]; 'A' <= b && b <= 'Z' {
				dst[i] = b + 'a' - 'A'
			}
		}
		return dst
	case schema.FoldLower:
		for i := 0; i < len(s); {
			if b := s[i]; b < utf8.RuneSelf {
				if 'A' <= b && b <= 'Z' {
					b += 'a' - 'A'
				}
				dst = append(dst, b)
				i++
				continue
			}
			r, n := utf8.DecodeRuneInString(s[i:])
			dst = utf8.AppendRune(dst, unicode.ToLower(r))
			i += n
		}
		return dst
	case schema.FoldGeneralCI:
		w := generalCI()
		for _, r := range s {
			var weight uint16 = 0xFFFD // every supplementary character
			if r <= 0xFFFF {
				weight = w[r]
			}
			dst = append(dst, byte(weight>>8), byte(weight))
		}
		return dst
	}
	return append(dst, s...)
}

// appendDecimal appends canonical decimal text (coerce's: no exponent, no
// '+', no redundant leading zero) without its trailing fractional zeros,
// and zero without a sign: the decimal's value.
func appendDecimal(dst []byte, s string) []byte {
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" || s == "" {
		s = "0"
	}
	return append(dst, s...)
}

// appendUUID appends a UUID written as 32 hexadecimal digits, in either
// case, with or without dashes, optionally in braces, as its canonical
// lower-case dashed text. Other text, which the target refuses as a UUID,
// is appended as it is.
func appendUUID(dst []byte, text string) []byte {
	s := text
	if len(s) >= 2 && s[0] == '{' && s[len(s)-1] == '}' {
		s = s[1 : len(s)-1]
	}
	var hex [32]byte
	n := 0
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case b == '-':
			continue
		case '0' <= b && b <= '9', 'a' <= b && b <= 'f':
		case 'A' <= b && b <= 'F':
			b += 'a' - 'A'
		default:
			return append(dst, text...)
		}
		if n == len(hex) {
			return append(dst, text...)
		}
		hex[n] = b
		n++
	}
	if n != len(hex) {
		return append(dst, text...)
	}
	dst = append(dst, hex[:8]...)
	dst = append(dst, '-')
	dst = append(dst, hex[8:12]...)
	dst = append(dst, '-')
	dst = append(dst, hex[12:16]...)
	dst = append(dst, '-')
	dst = append(dst, hex[16:20]...)
	dst = append(dst, '-')
	return append(dst, hex[20:]...)
}
