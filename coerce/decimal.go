package coerce

import (
	"strconv"
	"strings"
)

// maxExponent bounds the exponent of a number in exponent form. Anything
// beyond it is far outside every column type txsink writes to.
const maxExponent = 1_000_000_000

// PostgreSQL's limits for an unconstrained numeric: digits before and after
// the decimal point. They bound a Decimal column with Precision 0.
const (
	pgNumericMaxInt   = 131072
	pgNumericMaxScale = 16383
)

// decimal is a number in decimal text, parsed without loss. Its digit string
// D (leading zeros removed) is the concatenation of hi and lo, and its value
// is D × 10^-frac, negated when neg.
type decimal struct {
	neg    bool
	hi, lo string // the digits of D, in two pieces of the input text
	frac   int    // digits of D after the decimal point; negative means trailing zeros
	// canonical reports that the input text is already in canonical form:
	// no '+', no exponent, no redundant leading zero, digits on both sides of
	// a '.', and not a negative zero. (Trailing zeros are allowed.)
	canonical bool
}

// numberError says why text is not a number; "" means it is one.
type numberError string

const (
	errNotNumber   numberError = "is not a number"
	errNotFinite   numberError = "is not a finite number (NaN and infinities cannot be stored)"
	errExponentBig numberError = "has an exponent beyond ±1000000000"
)

// parseDecimal parses decimal text: an optional sign, digits with an optional
// decimal point (".5" and "5." are accepted), and an optional exponent
// ("e-3"). It accepts no spaces, underscores, hexadecimal or names; NaN and
// infinities give errNotFinite.
func parseDecimal(s string) (d decimal, bad numberError) {
	i := 0
	plus := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		d.neg = s[i] == '-'
		plus = s[i] == '+'
		i++
	}
	ipStart := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	ip := s[ipStart:i]
	var fp string
	dot := false
	if i < len(s) && s[i] == '.' {
		dot = true
		i++
		fpStart := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		fp = s[fpStart:i]
	}
	if len(ip)+len(fp) == 0 {
		if isNonFinite(s) {
			return d, errNotFinite
		}
		return d, errNotNumber
	}
	exp := 0
	hasExp := false
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		hasExp = true
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		if i == len(s) {
			return d, errNotNumber
		}
		for ; i < len(s); i++ {
			if !isDigit(s[i]) {
				return d, errNotNumber
			}
			exp = exp*10 + int(s[i]-'0')
			if exp > maxExponent {
				return d, errExponentBig
			}
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) {
		return d, errNotNumber
	}
	d.frac = len(fp) - exp
	// Strip leading zeros: from the integer part, then, when it is all
	// zeros, from the fraction.
	hi := strings.TrimLeft(ip, "0")
	lo := fp
	if hi == "" {
		lo = strings.TrimLeft(fp, "0")
	}
	d.hi, d.lo = hi, lo
	zero := hi == "" && lo == ""
	if zero {
		d.neg = false
	}
	d.canonical = !plus && !hasExp && ip != "" && (!dot || fp != "") &&
		(hi == ip || ip == "0") && !(zero && s[0] == '-')
	return d, ""
}

// fitsAsWritten is canonicalDecimal's fast path: it reports whether s is
// plain decimal text already in canonical form ([-]digits[.digits], no
// redundant leading zero, not a negative zero) whose digits fit the column
// as written, so that s itself is the answer. It answers false whenever it
// is not sure (a negative scale, a scale above the precision, or anything
// but the plain form); parseDecimal then decides.
func fitsAsWritten(s string, precision, scale int) bool {
	maxInt, maxFrac := pgNumericMaxInt, pgNumericMaxScale
	if precision > 0 {
		maxInt, maxFrac = precision-scale, scale
	}
	if maxInt < 0 || maxFrac < 0 {
		return false
	}
	i := 0
	if len(s) > 0 && s[0] == '-' {
		i = 1
	}
	start := i
	i = skipDigits(s, i)
	ints := i - start
	switch {
	case ints == 0:
		return false
	case s[start] == '0':
		if ints > 1 {
			return false // a redundant leading zero
		}
		ints = 0 // "0.x": no integer digit to count
	}
	fracs := 0
	if i < len(s) && s[i] == '.' {
		j := i + 1
		i = skipDigits(s, j)
		if fracs = i - j; fracs == 0 {
			return false
		}
	}
	if i != len(s) || ints > maxInt || fracs > maxFrac {
		return false
	}
	if start == 1 && ints == 0 && strings.Trim(s[2:], "0.") == "" {
		return false // a negative zero, which canonical form writes without its sign
	}
	return true
}

// isNonFinite reports whether s names NaN or an infinity, as strconv and
// the databases spell them.
func isNonFinite(s string) bool {
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	return strings.EqualFold(s, "nan") || strings.EqualFold(s, "inf") || strings.EqualFold(s, "infinity")
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// skipDigits returns the offset of the first byte of s at or after i that
// is not a digit.
func skipDigits(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// ndigits returns the length of D.
func (d *decimal) ndigits() int { return len(d.hi) + len(d.lo) }

// digit returns the i-th digit of D.
func (d *decimal) digit(i int) byte {
	if i < len(d.hi) {
		return d.hi[i]
	}
	return d.lo[i-len(d.hi)]
}

// isZero reports whether the value is zero.
func (d *decimal) isZero() bool { return d.ndigits() == 0 }

// trailingZeros returns the number of zeros at the end of D.
func (d *decimal) trailingZeros() int {
	n := d.ndigits()
	z := 0
	for z < n && d.digit(n-1-z) == '0' {
		z++
	}
	return z
}

// fracDigits returns the number of fractional digits the value needs: those
// up to its last non-zero fractional digit (0 for an integer; negative when
// the value is a multiple of 10, 100, …).
func (d *decimal) fracDigits() int {
	if d.isZero() {
		return 0
	}
	return d.frac - d.trailingZeros()
}

// intDigits returns the number of digits before the decimal point (0 or
// negative when the value is below 1, -k when it has k zeros after the point
// before its first significant digit, not counting the usual one).
func (d *decimal) intDigits() int {
	if d.isZero() {
		return 0
	}
	return d.ndigits() - d.frac
}

// text renders the value as plain decimal text with exactly keep fractional
// digits; keep must not cut a non-zero digit.
func (d *decimal) text(keep int) string {
	n := d.ndigits()
	ints := n - d.frac
	if n == 0 {
		ints = 0 // zero: a single "0" before the point
	}
	var b strings.Builder
	b.Grow(1 + max(ints, 1) + 1 + keep)
	if d.neg {
		b.WriteByte('-')
	}
	if ints > 0 {
		for i := 0; i < ints; i++ {
			if i < n {
				b.WriteByte(d.digit(i))
			} else {
				b.WriteByte('0')
			}
		}
	} else {
		b.WriteByte('0')
	}
	if keep > 0 {
		b.WriteByte('.')
		for j := 0; j < keep; j++ {
			if k := ints + j; k >= 0 && k < n {
				b.WriteByte(d.digit(k))
			} else {
				b.WriteByte('0')
			}
		}
	}
	return b.String()
}

// uint64Value returns the magnitude of an integral value and whether it fits
// in a uint64. The value must have no fractional digits (fracDigits() <= 0).
func (d *decimal) uint64Value() (uint64, bool) {
	ints := d.intDigits()
	if ints > 20 {
		return 0, false
	}
	var u uint64
	n := d.ndigits()
	for i := 0; i < ints; i++ {
		c := uint64(0)
		if i < n {
			c = uint64(d.digit(i) - '0')
		}
		if u > (1<<64-1-c)/10 {
			return 0, false
		}
		u = u*10 + c
	}
	return u, true
}

// canonicalDecimal checks s against a decimal column with the given
// precision and scale (precision <= 0: unconstrained, within PostgreSQL's
// numeric limits) and returns its canonical text, or the reason it does not
// fit.
func canonicalDecimal(s string, precision, scale int) (string, string) {
	if fitsAsWritten(s, precision, scale) {
		return s, ""
	}
	d, bad := parseDecimal(s)
	if bad != "" {
		return "", string(bad)
	}
	maxInt, maxFrac := pgNumericMaxInt, pgNumericMaxScale
	if precision > 0 {
		maxInt, maxFrac = precision-scale, scale
	}
	if !d.isZero() { // zero fits every column; only its written scale may shrink
		if f := d.fracDigits(); f > maxFrac {
			switch {
			case maxFrac > 0:
				return "", "has " + plural(f, "fractional digit") + ", the column keeps " + strconv.Itoa(maxFrac) + " (txsink never rounds)"
			case maxFrac == 0:
				return "", "has " + plural(f, "fractional digit") + ", the column keeps none (txsink never rounds)"
			default:
				return "", "is not a multiple of 1e" + strconv.Itoa(-maxFrac) + ", as the column's negative scale requires (txsink never rounds)"
			}
		}
		if n := d.intDigits(); n > maxInt {
			if maxInt >= 0 {
				return "", "has " + plural(n, "integer digit") + ", the column keeps " + strconv.Itoa(maxInt)
			}
			return "", "is too large: the column holds magnitudes below 1e" + strconv.Itoa(maxInt)
		}
	}
	keep := min(max(d.frac, 0), max(maxFrac, 0))
	if d.canonical && keep == d.frac {
		return s, ""
	}
	return d.text(keep), ""
}
