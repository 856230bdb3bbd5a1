package coerce

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/schema"
)

// intBits returns the width of an Int or Uint column: Bits, or 64 when Bits
// is unset (0) or beyond 64.
func intBits(col *schema.Column) uint {
	if col.Bits <= 0 || col.Bits > 64 {
		return 64
	}
	return uint(col.Bits)
}

// intRange returns the range of a signed column of the given width.
func intRange(bits uint) (lo, hi int64) {
	return -1 << (bits - 1), 1<<(bits-1) - 1
}

// uintMax returns the largest value of an unsigned column of the given width.
func uintMax(bits uint) uint64 {
	if bits >= 64 {
		return math.MaxUint64
	}
	return 1<<bits - 1
}

// plural returns "1 digit" or "n digits".
func plural(n int, word string) string {
	if n == 1 || n == -1 {
		return strconv.Itoa(n) + " " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// integer is an integral value read from any input: its magnitude and sign.
// A magnitude beyond uint64 is reported by big.
type integer struct {
	neg bool
	mag uint64
	big bool
}

// readInteger reads an integral value from v, for Int, Uint and the integer
// forms of dates and times. It accepts Number and string holding an integer,
// or a decimal that is exactly integral ("5.0", "5e2"), bool (0 or 1, when
// withBool), Go integers, and floats that are integral (when withFloat). The
// returned string is the reason v is refused; the returned bool reports that
// v's Go type is not taken at all.
func readInteger(v changelog.Value, withBool, withFloat bool) (n integer, reason string, badType bool) {
	switch x := v.(type) {
	case changelog.Number:
		return integerText(string(x))
	case string:
		return integerText(x)
	case int64:
		if x < 0 {
			return integer{neg: true, mag: uint64(-x)}, "", false // -MinInt64 wraps to 1<<63, its magnitude
		}
		return integer{mag: uint64(x)}, "", false
	case uint64:
		return integer{mag: x}, "", false
	case bool:
		if !withBool {
			return n, "", true
		}
		if x {
			return integer{mag: 1}, "", false
		}
		return integer{}, "", false
	case float64:
		if !withFloat {
			return n, "", true
		}
		return integerFloat(x)
	case float32:
		if !withFloat {
			return n, "", true
		}
		return integerFloat(float64(x))
	}
	return n, "", true
}

// integerText reads an integer written as decimal text.
func integerText(s string) (integer, string, bool) {
	if n, ok := plainInteger(s); ok {
		return n, "", false
	}
	d, bad := parseDecimal(s)
	if bad != "" {
		return integer{}, string(bad), false
	}
	if d.fracDigits() > 0 {
		return integer{}, "is not an integer (txsink never rounds)", false
	}
	u, ok := d.uint64Value()
	return integer{neg: d.neg, mag: u, big: !ok}, "", false
}

// plainInteger reads the common form, an optional sign and digits whose
// magnitude fits a uint64, without allocating; ok is false for anything else.
func plainInteger(s string) (n integer, ok bool) {
	i := 0
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		n.neg = s[0] == '-'
		i = 1
	}
	if i == len(s) || len(s)-i > 20 {
		return n, false
	}
	for ; i < len(s); i++ {
		c := s[i]
		if !isDigit(c) {
			return n, false
		}
		d := uint64(c - '0')
		if n.mag > (math.MaxUint64-d)/10 {
			return n, false
		}
		n.mag = n.mag*10 + d
	}
	if n.mag == 0 {
		n.neg = false
	}
	return n, true
}

// shortIntOf reads the shape most integers arrive in, a Number (or string)
// of at most 18 digits after an optional '-', as readInteger would read it;
// ok is false for anything else, which readInteger then decides. Eighteen
// digits cannot overflow an int64, so the loop needs no overflow check.
func shortIntOf(v changelog.Value) (n int64, ok bool) {
	var s string
	switch x := v.(type) {
	case changelog.Number:
		s = string(x)
	case string:
		s = x
	default:
		return 0, false
	}
	d := s
	if len(s) > 0 && s[0] == '-' {
		d = s[1:]
	}
	if len(d) == 0 || len(d) > 18 {
		return 0, false
	}
	for i := 0; i < len(d); i++ {
		c := d[i] - '0' // a byte below '0' wraps above 9
		if c > 9 {
			return 0, false
		}
		n = n*10 + int64(c)
	}
	if len(d) < len(s) {
		n = -n
	}
	return n, true
}

// integerFloat reads an integral float.
func integerFloat(f float64) (integer, string, bool) {
	if !finite(f) {
		return integer{}, string(errNotFinite), false
	}
	if f != math.Trunc(f) {
		return integer{}, "is not an integer (txsink never rounds)", false
	}
	if f <= -(1<<64) || f >= 1<<64 {
		return integer{neg: f < 0, big: true}, "", false
	}
	if f < 0 {
		return integer{neg: true, mag: uint64(-f)}, "", false
	}
	return integer{mag: uint64(f)}, "", false
}

// int64Value returns n as an int64 when it fits.
func (n integer) int64Value() (int64, bool) {
	switch {
	case n.big:
		return 0, false
	case n.neg && n.mag <= 1<<63:
		return int64(-n.mag), true // 1<<63 wraps to MinInt64, as wanted
	case !n.neg && n.mag <= math.MaxInt64:
		return int64(n.mag), true
	}
	return 0, false
}

// toInt converts v for a signed integer column.
func toInt(col *schema.Column, v changelog.Value) (any, error) {
	if i, ok := shortIntOf(v); ok {
		if lo, hi := intRange(intBits(col)); lo <= i && i <= hi {
			return i, nil
		}
	}
	return toIntAny(col, v)
}

// toIntAny is toInt for every input: each Go type, every spelling of an
// integer, and the errors. toInt tries shortIntOf first because nearly
// every value it sees is a short integer Number, which this path reads
// only after normalize's and readInteger's type switches and with an
// overflow check per digit.
func toIntAny(col *schema.Column, v changelog.Value) (any, error) {
	v = normalize(v)
	n, reason, badType := readInteger(v, true, true)
	if badType {
		return nil, typeError(col, v)
	}
	if reason != "" {
		return nil, newError(col, v, reason)
	}
	lo, hi := intRange(intBits(col))
	i, ok := n.int64Value()
	if !ok || i < lo || i > hi {
		return nil, newError(col, v, "is out of range: the column holds "+strconv.FormatInt(lo, 10)+" to "+strconv.FormatInt(hi, 10))
	}
	return i, nil
}

// toUint converts v for an unsigned integer column.
func toUint(col *schema.Column, v changelog.Value) (any, error) {
	if i, ok := shortIntOf(v); ok && i >= 0 && uint64(i) <= uintMax(intBits(col)) {
		return uint64(i), nil
	}
	return toUintAny(col, v)
}

// toUintAny is toUint for every input (see toIntAny).
func toUintAny(col *schema.Column, v changelog.Value) (any, error) {
	v = normalize(v)
	n, reason, badType := readInteger(v, true, true)
	if badType {
		return nil, typeError(col, v)
	}
	if reason != "" {
		return nil, newError(col, v, reason)
	}
	hi := uintMax(intBits(col))
	if n.big || (n.neg && n.mag != 0) || n.mag > hi {
		return nil, newError(col, v, "is out of range: the column holds 0 to "+strconv.FormatUint(hi, 10))
	}
	return n.mag, nil
}

// toDecimal converts v for an exact numeric column and returns its canonical
// decimal text: no exponent, no '+', no redundant leading zero, no minus on
// zero, and the fractional digits as written up to the column's scale (zeros
// beyond the scale are dropped; other digits beyond it are an error).
//
// A Decimal column with Precision 0 is unconstrained (PostgreSQL's plain
// numeric): Scale is ignored and PostgreSQL's limits apply (131072 digits
// before the point, 16383 after). A negative Scale, or one above Precision
// (PostgreSQL 15), is honoured.
//
// Number and string are read exactly, in plain or exponent form. Go integers
// are exact too. A float64 (or float32) is read through its shortest
// round-tripping text (strconv's 'g' format with precision -1): 0.1 is read
// as "0.1", not as the binary value nearest to it.
func toDecimal(col *schema.Column, v changelog.Value) (any, error) {
	// The common case first: text already canonical and within the column,
	// returned as written without normalize's type switch and sameOr's
	// comparison (canonicalDecimal's own fast path, taken sooner).
	switch x := v.(type) {
	case changelog.Number:
		if fitsAsWritten(string(x), col.Precision, col.Scale) {
			return textOf(v), nil
		}
	case string:
		if fitsAsWritten(x, col.Precision, col.Scale) {
			return v, nil
		}
	}
	return toDecimalAny(col, v)
}

// toDecimalAny is toDecimal for every input and every error.
func toDecimalAny(col *schema.Column, v changelog.Value) (any, error) {
	var s string
	switch x := normalize(v).(type) {
	case changelog.Number:
		s = string(x)
	case string:
		s = x
	case int64:
		s = strconv.FormatInt(x, 10)
	case uint64:
		s = strconv.FormatUint(x, 10)
	case float64:
		if !finite(x) {
			return nil, newError(col, v, string(errNotFinite))
		}
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		if !finite(float64(x)) {
			return nil, newError(col, v, string(errNotFinite))
		}
		s = strconv.FormatFloat(float64(x), 'g', -1, 32)
	default:
		return nil, typeError(col, v)
	}
	out, reason := canonicalDecimal(s, col.Precision, col.Scale)
	if reason != "" {
		e := newError(col, v, reason)
		if _, text := v.(string); text && reason == string(errNotNumber) && base64Like(s) {
			e.Reason += ": it reads as base64, the form Debezium's decimal.handling.mode=precise sends a DECIMAL in, whose scale only the schema envelope carries"
			e.Hint = "have the connector send the schema envelope (value.converter.schemas.enable=true), or set its decimal.handling.mode=string"
		}
		return nil, e
	}
	return sameOr(v, out), nil
}

// base64Like reports whether s is standard base64 of at least one byte
// ("AJw="), as Debezium writes a precise decimal's unscaled bytes.
func base64Like(s string) bool {
	if len(s) < 4 || len(s)%4 != 0 {
		return false
	}
	body := strings.TrimRight(s, "=")
	if len(s)-len(body) > 2 {
		return false
	}
	for _, r := range body {
		if !('A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '+' || r == '/') {
			return false
		}
	}
	return true
}

// toFloat converts v for a binary floating-point column (Bits 32 or 64; 0
// means 64). Number and string are parsed to the nearest float of the
// column's width, as the database would store them; Go integers and floats
// are converted likewise. Refused: NaN and infinities, a value beyond the
// width's range, and a non-zero value that would become zero.
func toFloat(col *schema.Column, v changelog.Value) (any, error) {
	bits := 64
	if col.Bits == 32 {
		bits = 32
	}
	var f float64
	nonZero := false
	switch x := normalize(v).(type) {
	case changelog.Number, string:
		var s string
		if n, ok := x.(changelog.Number); ok {
			s = string(n)
		} else {
			s = x.(string)
		}
		// parseDecimal checks the syntax, so strconv's hexadecimal floats,
		// underscores and names are not accepted.
		d, bad := parseDecimal(s)
		if bad != "" {
			return nil, newError(col, v, string(bad))
		}
		var err error
		f, err = strconv.ParseFloat(s, bits)
		if errors.Is(err, strconv.ErrRange) {
			return nil, newError(col, v, "is out of range for a "+strconv.Itoa(bits)+"-bit float")
		}
		if err != nil { // not expected after parseDecimal, but never pass it on
			return nil, newError(col, v, string(errNotNumber))
		}
		nonZero = !d.isZero()
	case int64:
		f, nonZero = float64(x), x != 0
	case uint64:
		f, nonZero = float64(x), x != 0
	case float64:
		f, nonZero = x, x != 0
	case float32:
		f, nonZero = float64(x), x != 0
	default:
		return nil, typeError(col, v)
	}
	if !finite(f) {
		return nil, newError(col, v, string(errNotFinite))
	}
	if bits == 32 {
		f32 := float32(f)
		if math.IsInf(float64(f32), 0) {
			return nil, newError(col, v, "is out of range for a 32-bit float")
		}
		f = float64(f32)
	}
	if f == 0 && nonZero {
		return nil, newError(col, v, "is too small for a "+strconv.Itoa(bits)+"-bit float: it would become 0")
	}
	return f, nil
}

// toBool converts v for a boolean column: bool; Number, string or Go integer
// 0 or 1; strings "true", "false", "t", "f" in any case.
func toBool(col *schema.Column, v changelog.Value) (any, error) {
	const want = "is not a boolean (want true/false, t/f or 1/0)"
	switch x := normalize(v).(type) {
	case bool:
		return x, nil
	case changelog.Number:
		switch x {
		case "0":
			return false, nil
		case "1":
			return true, nil
		}
		return nil, newError(col, v, want)
	case string:
		switch {
		case x == "1" || x == "t" || x == "T" || len(x) == 4 && equalFoldASCII(x, "true"):
			return true, nil
		case x == "0" || x == "f" || x == "F" || len(x) == 5 && equalFoldASCII(x, "false"):
			return false, nil
		}
		return nil, newError(col, v, want)
	case int64:
		if x == 0 || x == 1 {
			return x == 1, nil
		}
		return nil, newError(col, v, want)
	case uint64:
		if x == 0 || x == 1 {
			return x == 1, nil
		}
		return nil, newError(col, v, want)
	}
	return nil, typeError(col, v)
}

// equalFoldASCII reports whether s equals the lower-case ASCII word lower,
// ignoring ASCII case.
func equalFoldASCII(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
