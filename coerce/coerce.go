// Package coerce turns one source value into exactly what a target column can
// hold, or refuses it. It is pure: no I/O, no state, safe for concurrent use.
//
// # No rounding, no truncation
//
// txsink never silently changes a value to make it fit. A value the column
// cannot hold exactly is an *Error, never a nearby value:
//
//   - an integer out of the column's range, or a number with a fractional
//     part going to an integer column ("1.5" into INT), is refused; a number
//     that is exactly integral in another spelling ("5.0", "5e2") is accepted;
//   - a decimal with more integer digits than Precision-Scale, or with
//     non-zero fractional digits beyond Scale, is refused (zeros beyond the
//     scale are dropped: that loses nothing);
//   - a string longer than the column's Length (counted in characters) or
//     not valid UTF-8, and binary data longer than Length bytes, are refused;
//   - a date-time or time with non-zero fractional-second digits beyond the
//     column's FracDigits is refused (MySQL would round it);
//   - NaN and infinities are refused.
//
// There are two deliberate exceptions. A Float column is approximate by
// nature, so a number goes to the nearest float of the column's width, as the
// database itself would store it; what is refused there is a value that
// overflows the width, a non-zero value that would become zero, and NaN/Inf.
// A column of class Unknown (a type txsink does not know) gets values passed
// on unchecked: the database decides.
//
// # Integer dates and times
//
// Debezium writes temporal values as integers whose unit its schema names;
// txsink often reads the record without that schema, so the target column
// decides the unit, following the rule Debezium itself uses for MySQL:
//
//   - Date: days since 1970-01-01 (io.debezium.time.Date).
//   - DateTime and Timestamp: milliseconds since 1970-01-01T00:00:00Z when
//     the column keeps at most 3 fractional-second digits (FracDigits 0..3,
//     io.debezium.time.Timestamp), microseconds when it keeps 4 to 6
//     (io.debezium.time.MicroTimestamp).
//   - Time: milliseconds since midnight when FracDigits is 0..3
//     (io.debezium.time.Time), microseconds when it is 4..6
//     (io.debezium.time.MicroTime). A Time may be negative or beyond 24
//     hours, as MySQL's TIME may.
//
// # Results
//
// Value returns one of nil, int64, uint64, float64, bool, string, []byte or
// time.Time; see Value for which class gives which.
package coerce

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/schema"
)

// Value converts v for column col and returns what the column can hold, or an
// *Error when it cannot hold v exactly. col must not be nil.
//
// v is a changelog.Value (nil, bool, changelog.Number, string, []byte,
// changelog.JSON, int64, float64); Go code using txsink as a library may also
// pass the other Go integer types (int, int8 … int32, uint, uint8 … uint64),
// float32 and time.Time.
//
// The result by column class:
//
//	any class, nil     nil (an *Error when the column is NOT NULL)
//	Int                int64
//	Uint               uint64
//	Decimal            string: canonical plain decimal text ("-0.05")
//	Float              float64 (for Bits 32, a value exactly representable as float32)
//	Bool               bool
//	String             string
//	Bytes              []byte (possibly sharing memory with v)
//	Date               string "YYYY-MM-DD"
//	DateTime           time.Time in UTC carrying the wall-clock time
//	Timestamp          time.Time in UTC (the instant)
//	Time               string "[-]HH:MM:SS[.f…]" (fraction only when non-zero)
//	JSON               string holding valid JSON text
//	Unknown            see below
//
// What each class accepts; any other input type is an *Error naming the Go
// type and the class:
//
//   - Int, Uint: Number or string holding an integer ("42", "-7", "+7"), or a
//     decimal that is exactly integral ("5.0", "5e2"; "1.5" is refused); bool
//     as 0 or 1; Go integers; integral floats. The range follows Bits (8, 16,
//     24 for MEDIUMINT, 32, 64; 0 means 64), signed for Int, unsigned for
//     Uint (up to 18446744073709551615).
//   - Decimal: Number or string, in plain or exponent form; Go integers;
//     floats through their shortest round-tripping text (strconv's 'g'
//     format, precision -1), so 0.1 is read as "0.1", not as the binary
//     value nearest to it. The result has no exponent, no '+', no redundant
//     leading zero and no minus on zero; it keeps the fractional digits as
//     written up to Scale: zeros beyond Scale are dropped, other digits beyond
//     it are an error, as are more than Precision-Scale integer digits.
//     Precision 0 means unconstrained (PostgreSQL's plain numeric): Scale is
//     ignored and PostgreSQL's limits apply (131072 digits before the point,
//     16383 after). A negative Scale, or one above Precision (PostgreSQL 15),
//     is honoured. NaN and infinities are refused.
//   - Float: Number or string in decimal syntax (no hexadecimal, no names);
//     Go integers and floats. The value becomes the nearest float of the
//     column's width (Bits 32 or 64; 0 means 64). Refused: NaN, infinities,
//     a value beyond the width's range, a non-zero value that would become 0.
//   - Bool: bool; 0 or 1 as Number, string or Go integer; the strings true,
//     false, t and f in any case.
//   - String: string, and []byte or JSON holding text; Number as its text;
//     bool as "true"/"false"; Go integers and finite floats as their shortest
//     text. The text must be valid UTF-8 (the error gives the offset of the
//     first bad byte) and, when Length > 0, at most Length characters (runes).
//   - Bytes: []byte; a string as its bytes, never decoded: JSON formats read
//     without a schema deliver binary columns as text (Debezium's base64,
//     hex, …) and cannot say which encoding, while a decoder that knows
//     (Debezium with the schema envelope) delivers []byte already. At most
//     Length bytes when Length > 0.
//   - Date: "YYYY-MM-DD"; a date-time string (as below) whose time is exactly
//     midnight and whose zone, if written, is UTC; an integer (Number or Go
//     integer) counting days since 1970-01-01 (io.debezium.time.Date); a
//     time.Time at midnight, whose date in its own location is taken.
//   - DateTime, Timestamp: "YYYY-MM-DD HH:MM:SS[.f…]" ('T' may replace the
//     space; a date alone means midnight), optionally followed by a zone:
//     "Z", "±HH", "±HHMM" or "±HH:MM". With a zone the value is converted to
//     UTC; without one it is taken as UTC (for a DateTime, as the wall-clock
//     time written). An integer is Debezium's epoch form: milliseconds when
//     the column keeps at most 3 fractional-second digits, microseconds when
//     it keeps 4 to 6. A time.Time is converted to UTC.
//   - Time: "[-]H[H[H]]:MM:SS[.f…]" within MySQL's range -838:59:59 to
//     838:59:59; an integer counts milliseconds (FracDigits 0..3) or
//     microseconds (4..6) since midnight and may be negative; a time.Time
//     gives its clock time in its own location.
//   - JSON: JSON, string (Debezium's io.debezium.data.Json is a string) or
//     []byte holding one valid JSON value in valid UTF-8, returned as is;
//     Number, bool, Go integers and finite floats as their JSON text.
//   - Unknown: passed on unchecked, the database decides: string, Number and
//     JSON as strings; bool, []byte, Go integers (as int64 or uint64), floats
//     (as float64) and time.Time as themselves.
//
// Dates and date-times must fall in years 0001 to 9999 (after conversion to
// UTC). Date-times, timestamps and times with non-zero fractional-second
// digits beyond the column's FracDigits are refused.
func Value(col *schema.Column, v changelog.Value) (any, error) {
	if v == nil {
		if !col.Nullable {
			return nil, newError(col, v, "cannot go into a NOT NULL column")
		}
		return nil, nil
	}
	switch col.Class {
	case schema.Int:
		return toInt(col, v)
	case schema.Uint:
		return toUint(col, v)
	case schema.Decimal:
		return toDecimal(col, v)
	case schema.Float:
		return toFloat(col, v)
	case schema.Bool:
		return toBool(col, v)
	case schema.String:
		return toString(col, v)
	case schema.Bytes:
		return toBytes(col, v)
	case schema.Date:
		return toDate(col, v)
	case schema.DateTime:
		return toDateTime(col, v)
	case schema.Timestamp:
		return toDateTime(col, v)
	case schema.Time:
		return toTime(col, v)
	case schema.JSON:
		return toJSON(col, v)
	case schema.Unknown:
		return toUnknown(col, v)
	}
	return nil, newError(col, v, "cannot be converted: txsink does not know column class "+col.Class.String())
}

// Int64 converts v for the Int column col when v has the shape nearly
// every integer arrives in (a Number or string of at most 18 digits, in
// the column's range), returning the same int64 Value would but without
// boxing it in an interface (one allocation per value above 255). ok is
// false for anything else: Value then converts or refuses v.
func Int64(col *schema.Column, v changelog.Value) (n int64, ok bool) {
	if col.Class != schema.Int {
		return 0, false
	}
	if i, ok := shortIntOf(v); ok {
		if lo, hi := intRange(intBits(col)); lo <= i && i <= hi {
			return i, true
		}
	}
	return 0, false
}

// ShortInt reads v when it has the shape Int64 converts without boxing (a
// Number or string of at most 18 digits, after an optional '-'), for a
// caller that converts many values of one column and checks the range
// itself: for an Int column col, Int64(col, v) is ShortInt(v) when that is
// within IntRange(col), and not ok otherwise.
func ShortInt(v changelog.Value) (n int64, ok bool) { return shortIntOf(v) }

// IntRange returns the least and the greatest value the Int column col
// holds, by its Bits (see ShortInt).
func IntRange(col *schema.Column) (lo, hi int64) { return intRange(intBits(col)) }

// DateTime converts v for the DateTime or Timestamp column col when v is
// a plain date-time string without a zone (the shape nearly every one
// arrives in), returning the same time.Time Value would (in UTC, its
// location nil) but without boxing it in an interface. ok is false for anything else: Value then converts
// or refuses v.
func DateTime(col *schema.Column, v changelog.Value) (t time.Time, ok bool) {
	if col.Class != schema.DateTime && col.Class != schema.Timestamp {
		return time.Time{}, false
	}
	if s, isString := v.(string); isString {
		return plainDateTime(s, fracDigits(col))
	}
	return time.Time{}, false
}

// Text reports that Value returns the string s itself for the String
// column col, for a caller that copies the text it keeps and so needs no
// interface made of it: true for valid UTF-8 no longer in bytes than the
// column's Length, told with one call (validText's). false says nothing
// more: Value then converts s (a longer text may still fit in characters)
// or refuses it.
func Text(col *schema.Column, s string) bool {
	return col.Class == schema.String && (col.Length <= 0 || len(s) <= col.Length) && validText(s)
}

// DecimalText reports whether Value returns the text s itself for the
// Decimal column col, s being a string or a Number's text: plain decimal
// text in canonical form whose digits fit the column as written. When it
// is false, Value converts or refuses the value.
func DecimalText(col *schema.Column, s string) bool {
	return col.Class == schema.Decimal && fitsAsWritten(s, col.Precision, col.Scale)
}

// Error reports a value a column cannot hold. It is permanent: the same value
// fails the same way every time, so retrying does not help.
type Error struct {
	// Column is the target column's name.
	Column string
	// SQLType is the column's type as the target writes it, or its class
	// name when the target gave none.
	SQLType string
	// Value is a short rendering of the refused value (see Describe).
	Value string
	// Reason says what is wrong, phrased to follow the value:
	// "has 3 fractional digits, the column keeps 2 (txsink never rounds)".
	Reason string
	// Hint, when set, is the fix the value itself points to, better than
	// changing the column: for a DECIMAL sent as Debezium's base64
	// (decimal.handling.mode=precise without the schema envelope), the
	// connector's setting.
	Hint string
}

// Error returns "column NAME TYPE: value VALUE REASON".
func (e *Error) Error() string {
	return "column " + e.Column + " " + e.SQLType + ": value " + e.Value + " " + e.Reason
}

// Permanent reports true: bad input stays bad, whatever is retried.
func (e *Error) Permanent() bool { return true }

// Kind reports errkind.BadInput: the value does not fit its column.
func (e *Error) Kind() errkind.Kind { return errkind.BadInput }

// Where names the column.
func (e *Error) Where() errkind.Where { return errkind.Where{Column: e.Column} }

// newError builds the *Error for column col and input v.
func newError(col *schema.Column, v changelog.Value, reason string) *Error {
	t := col.SQLType
	if t == "" {
		t = col.Class.String()
	}
	return &Error{Column: col.Name, SQLType: t, Value: Describe(v), Reason: reason}
}

// typeError is the *Error for an input Go type that class col.Class does not
// take.
func typeError(col *schema.Column, v changelog.Value) *Error {
	article := "a"
	if name := col.Class.String(); strings.IndexByte("aeiou", name[0]) >= 0 && name != "uint" {
		article = "an"
	}
	return newError(col, v, fmt.Sprintf("is %s, which cannot go into %s %s column", kindOf(v), article, col.Class))
}

// kindOf names what a value is, in the words of its source format.
func kindOf(v changelog.Value) string {
	switch x := v.(type) {
	case changelog.JSON:
		if len(x) > 0 && x[0] == '[' {
			return "a JSON array"
		}
		return "a JSON object"
	case bool:
		return "a boolean"
	case string:
		return "text"
	case changelog.Number:
		return "a number"
	case []byte:
		return "binary data"
	case time.Time:
		return "a time"
	}
	return fmt.Sprintf("a value of Go type %T", v)
}

// describeMax is the longest rendering Describe returns, in characters,
// including the closing "…" of a cut rendering.
const describeMax = 64

// Describe renders v briefly for messages: at most 64 characters, cut with
// "…" when longer. Strings are quoted Go-style ("abc", invalid UTF-8 and
// control characters escaped); numbers (changelog.Number, Go integers and
// floats) and JSON text are written bare; []byte is written as hex (0x0a1b);
// nil as NULL; time.Time in RFC 3339 with nanoseconds. Other types are
// written as TYPE(VALUE).
func Describe(v changelog.Value) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case bool:
		return strconv.FormatBool(x)
	case changelog.Number:
		return clip(string(x), false)
	case string:
		return clip(x, true)
	case changelog.JSON:
		return clip(string(x), false)
	case []byte:
		if len(x) == 0 {
			return "0x (empty)"
		}
		const maxBytes = (describeMax - 3) / 2
		if len(x) <= maxBytes {
			return "0x" + hex.EncodeToString(x)
		}
		return "0x" + hex.EncodeToString(x[:maxBytes-1]) + "…"
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int16:
		return strconv.FormatInt(int64(x), 10)
	case int8:
		return strconv.FormatInt(int64(x), 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case uint:
		return strconv.FormatUint(uint64(x), 10)
	case uint32:
		return strconv.FormatUint(uint64(x), 10)
	case uint16:
		return strconv.FormatUint(uint64(x), 10)
	case uint8:
		return strconv.FormatUint(uint64(x), 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	}
	return clip(fmt.Sprintf("%T(%v)", v, v), false)
}

// clip renders s in at most describeMax characters. quoted wraps it in
// double quotes with Go escapes; otherwise only invalid UTF-8 and
// non-printable characters are escaped.
func clip(s string, quoted bool) string {
	if quoted {
		if q := strconv.Quote(s); utf8.RuneCountInString(q) <= describeMax {
			return q
		}
	} else if len(s) <= describeMax && utf8.ValidString(s) && printable(s) {
		return s
	}
	out := make([]byte, 0, describeMax+8)
	if quoted {
		out = append(out, '"')
	}
	n := len(out) // characters written so far
	// Room for the closing quote (when quoted) and the "…".
	limit := describeMax - 1
	if quoted {
		limit--
	}
	cut := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var piece string
		if quoted || r == utf8.RuneError || !strconv.IsPrint(r) {
			q := strconv.Quote(s[i : i+size])
			piece = q[1 : len(q)-1]
		} else {
			piece = s[i : i+size]
		}
		w := utf8.RuneCountInString(piece)
		if n+w > limit {
			cut = true
			break
		}
		out = append(out, piece...)
		n += w
		i += size
	}
	if quoted {
		out = append(out, '"')
	}
	if cut {
		out = append(out, "…"...)
	}
	return string(out)
}

// printable reports whether every rune of s is printable.
func printable(s string) bool {
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}

// normalize maps the Go integer and float types a library caller may pass to
// int64, uint64 and float64, so the class conversions see fewer types. Other
// values are returned unchanged.
func normalize(v changelog.Value) changelog.Value {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	case int8:
		return int64(x)
	case uint:
		return uint64(x)
	case uint32:
		return int64(x)
	case uint16:
		return int64(x)
	case uint8:
		return int64(x)
	}
	return v
}

// finite reports whether f is neither NaN nor infinite.
func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
