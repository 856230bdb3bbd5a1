package coerce

import (
	"strconv"
	"strings"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/schema"
)

// The range of dates and date-times txsink writes: years 0001 to 9999.
const (
	minUnix = -62135596800 // 0001-01-01T00:00:00Z
	maxUnix = 253402300799 // 9999-12-31T23:59:59Z
	minDays = minUnix / 86400
	maxDays = maxUnix / 86400
)

// maxTime is the largest magnitude of a Time value, 838:59:59 (MySQL's TIME
// range), in nanoseconds.
const maxTime = (838*3600 + 59*60 + 59) * int64(time.Second)

// Reasons shared by the temporal classes.
const (
	yearRange      = "the column holds years 0001 to 9999"
	timeRange      = "the column holds -838:59:59 to 838:59:59"
	dateSyntax     = "is not a date (want YYYY-MM-DD)"
	dateTimeSyntax = "is not a date-time (want YYYY-MM-DD HH:MM:SS[.fffffffff], optionally followed by Z or ±HH[:MM])"
	timeSyntax     = "is not a time (want [-]HH:MM:SS[.fffffffff], hours up to 838)"
)

// fracDigits returns the column's fractional-second digits, within 0..9.
func fracDigits(col *schema.Column) int {
	return min(max(col.FracDigits, 0), 9)
}

// unitNanos returns the unit of integer date-times and times for col, in
// nanoseconds, and its name: microseconds when the column keeps 4 or more
// fractional-second digits, milliseconds otherwise.
func unitNanos(col *schema.Column) (int64, string) {
	if col.FracDigits > 3 {
		return int64(time.Microsecond), "microseconds"
	}
	return int64(time.Millisecond), "milliseconds"
}

// nanoDigits returns the number of significant fractional-second digits of a
// nanosecond count within a second (0 for whole seconds).
func nanoDigits(ns int) int {
	if ns == 0 {
		return 0
	}
	n := 9
	for ns%10 == 0 {
		ns /= 10
		n--
	}
	return n
}

// fracReason is the reason a value with n significant fractional-second
// digits does not fit a column that keeps fd.
func fracReason(n, fd int) string {
	keeps := "none"
	if fd > 0 {
		keeps = strconv.Itoa(fd)
	}
	return "has " + plural(n, "fractional-second digit") + ", the column keeps " + keeps + " (txsink never rounds)"
}

// DaysIn returns the number of days in month m (1 to 12) of year y of the
// proleptic Gregorian calendar, the calendar of every target.
func DaysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// digits reads the n decimal digits at s[i:i+n] as a number; ok is false
// when they are not all digits or s is too short.
func digits(s string, i, n int) (v int, ok bool) {
	if i+n > len(s) {
		return 0, false
	}
	for j := i; j < i+n; j++ {
		if !isDigit(s[j]) {
			return 0, false
		}
		v = v*10 + int(s[j]-'0')
	}
	return v, true
}

// fraction reads fractional-second digits: the nanoseconds they give (from
// the first nine) and how many of them are significant (up to the last
// non-zero one).
func fraction(f string) (nsec, significant int) {
	significant = len(strings.TrimRight(f, "0"))
	for i := 0; i < 9; i++ {
		nsec *= 10
		if i < len(f) {
			nsec += int(f[i] - '0')
		}
	}
	return nsec, significant
}

// wall is a date and time of day as written, with the zone suffix if any.
type wall struct {
	year, month, day int
	hour, min, sec   int
	nsec             int
	fracN            int  // significant fractional-second digits as written
	hasZone          bool // a zone suffix was written
	offset           int  // the zone's offset east of UTC, in seconds
}

// parseDate reads "YYYY-MM-DD" at the start of s into w; syntax is the
// reason to give when s is not in that form.
func parseDate(s string, w *wall, syntax string) string {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return syntax
	}
	y, ok1 := digits(s, 0, 4)
	m, ok2 := digits(s, 5, 2)
	d, ok3 := digits(s, 8, 2)
	if !ok1 || !ok2 || !ok3 {
		return syntax
	}
	if y < 1 {
		return "has year 0000: " + yearRange
	}
	if m < 1 || m > 12 || d < 1 || d > DaysIn(y, m) {
		return "is not a valid calendar date"
	}
	w.year, w.month, w.day = y, m, d
	return ""
}

// parseWall reads a date, optionally followed by ' ' or 'T', a time of day
// "HH:MM:SS[.f…]" and a zone ("Z", "±HH", "±HHMM" or "±HH:MM"). syntax is the
// reason to give when s is not in that form.
func parseWall(s string, syntax string) (w wall, reason string) {
	if reason := parseDate(s, &w, syntax); reason != "" {
		return w, reason
	}
	if len(s) == 10 {
		return w, ""
	}
	if len(s) < 19 || (s[10] != ' ' && s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':' {
		return w, syntax
	}
	h, ok1 := digits(s, 11, 2)
	mi, ok2 := digits(s, 14, 2)
	sec, ok3 := digits(s, 17, 2)
	if !ok1 || !ok2 || !ok3 {
		return w, syntax
	}
	if h > 23 || mi > 59 || sec > 59 {
		return w, "is not a valid time of day"
	}
	w.hour, w.min, w.sec = h, mi, sec
	i := 19
	if i < len(s) && s[i] == '.' {
		start := i + 1
		i = skipDigits(s, start)
		if i == start {
			return w, syntax
		}
		w.nsec, w.fracN = fraction(s[start:i])
	}
	if i == len(s) {
		return w, ""
	}
	w.hasZone = true
	switch s[i] {
	case 'Z', 'z':
		i++
	case '+', '-':
		sign := 1
		if s[i] == '-' {
			sign = -1
		}
		zh, ok := digits(s, i+1, 2)
		if !ok {
			return w, syntax
		}
		i += 3
		zm := 0
		if i < len(s) {
			if s[i] == ':' {
				i++
			}
			if zm, ok = digits(s, i, 2); !ok {
				return w, syntax
			}
			i += 2
		}
		if zh > 23 || zm > 59 {
			return w, "has an invalid zone offset"
		}
		w.offset = sign * (zh*3600 + zm*60)
	default:
		return w, syntax
	}
	if i != len(s) {
		return w, syntax
	}
	return w, ""
}

// appendPadded appends n in decimal with at least width digits.
func appendPadded(b []byte, n, width int) []byte {
	var tmp [20]byte
	s := strconv.AppendInt(tmp[:0], int64(n), 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// formatDate returns "YYYY-MM-DD".
func formatDate(y, m, d int) string {
	b := make([]byte, 0, 10)
	b = appendPadded(b, y, 4)
	b = append(b, '-')
	b = appendPadded(b, m, 2)
	b = append(b, '-')
	b = appendPadded(b, d, 2)
	return string(b)
}

// toDate converts v for a date column and returns "YYYY-MM-DD".
//
// Accepted: a string "YYYY-MM-DD", or a date-time string (see toDateTime)
// whose time is exactly midnight and whose zone, if any, is UTC; an integer
// (Number or Go integer) counting days since 1970-01-01, as Debezium's
// io.debezium.time.Date does; a time.Time at midnight, whose date in its own
// location is taken. Years 0001 to 9999.
func toDate(col *schema.Column, v changelog.Value) (any, error) {
	switch x := v.(type) {
	case string:
		w, reason := parseWall(x, dateSyntax)
		if reason != "" {
			return nil, newError(col, v, reason)
		}
		if len(x) == 10 {
			return v, nil
		}
		if w.hour != 0 || w.min != 0 || w.sec != 0 || w.nsec != 0 {
			return nil, newError(col, v, "has a time of day other than midnight; a date column keeps only the date")
		}
		if w.offset != 0 {
			return nil, newError(col, v, "has a zone offset other than UTC, so which date it means is ambiguous")
		}
		return formatDate(w.year, w.month, w.day), nil
	case time.Time:
		h, m, s := x.Clock()
		if h != 0 || m != 0 || s != 0 || x.Nanosecond() != 0 {
			return nil, newError(col, v, "has a time of day other than midnight; a date column keeps only the date")
		}
		y, mo, d := x.Date()
		if y < 1 || y > 9999 {
			return nil, newError(col, v, "is out of range: "+yearRange)
		}
		return formatDate(y, int(mo), d), nil
	}
	n, reason, badType := readInteger(normalize(v), false, false)
	if badType {
		return nil, typeError(col, v)
	}
	if reason != "" {
		return nil, newError(col, v, reason)
	}
	days, ok := n.int64Value()
	if !ok || days < minDays || days > maxDays {
		return nil, newError(col, v, "is out of range as days since 1970-01-01: "+yearRange)
	}
	y, m, d := time.Unix(days*86400, 0).UTC().Date()
	return formatDate(y, int(m), d), nil
}

// toDateTime converts v for a DateTime or Timestamp column and returns a
// time.Time in UTC. For a DateTime it carries the wall-clock time (in the UTC
// location); for a Timestamp, the instant.
//
// Accepted:
//   - a string "YYYY-MM-DD HH:MM:SS[.fffffffff]" ('T' may replace the space;
//     a date alone means midnight), optionally followed by a zone: "Z",
//     "±HH", "±HHMM" or "±HH:MM". With a zone the time is converted to UTC;
//     without one it is taken as UTC (for a DateTime: as the wall-clock
//     time it is);
//   - an integer (Number or Go integer): Debezium's epoch form, milliseconds
//     since 1970-01-01T00:00:00Z when the column keeps at most 3
//     fractional-second digits, microseconds when it keeps 4 to 6;
//   - a time.Time, converted to UTC.
//
// Non-zero fractional-second digits beyond the column's FracDigits are
// refused, as are years outside 0001 to 9999 (after conversion to UTC).
func toDateTime(col *schema.Column, v changelog.Value) (any, error) {
	if s, ok := v.(string); ok {
		if t, ok := plainDateTime(s, fracDigits(col)); ok {
			return t, nil
		}
	}
	return toDateTimeAny(col, v)
}

// toDateTimeAny is toDateTime for every input: each form, each zone, and
// the errors. toDateTime tries plainDateTime first because nearly every
// string it sees is a plain date-time without a zone, which this path reads
// through parseWall's general grammar.
func toDateTimeAny(col *schema.Column, v changelog.Value) (any, error) {
	fd := fracDigits(col)
	var t time.Time
	switch x := v.(type) {
	case string:
		w, reason := parseWall(x, dateTimeSyntax)
		if reason != "" {
			return nil, newError(col, v, reason)
		}
		if w.fracN > fd {
			return nil, newError(col, v, fracReason(w.fracN, fd))
		}
		t = time.Date(w.year, time.Month(w.month), w.day, w.hour, w.min, w.sec, w.nsec, time.UTC)
		if w.offset != 0 {
			t = t.Add(-time.Duration(w.offset) * time.Second)
			if y := t.Year(); y < 1 || y > 9999 {
				return nil, newError(col, v, "is out of range once converted to UTC: "+yearRange)
			}
		}
		return t, nil
	case time.Time:
		t = x.UTC()
		if y := t.Year(); y < 1 || y > 9999 {
			return nil, newError(col, v, "is out of range: "+yearRange)
		}
		if n := nanoDigits(t.Nanosecond()); n > fd {
			return nil, newError(col, v, fracReason(n, fd))
		}
		return t, nil
	}
	n, reason, badType := readInteger(normalize(v), false, false)
	if badType {
		return nil, typeError(col, v)
	}
	if reason != "" {
		return nil, newError(col, v, reason)
	}
	unit, name := unitNanos(col)
	perSec := int64(time.Second) / unit
	i, ok := n.int64Value()
	if !ok || i < minUnix*perSec || i > (maxUnix+1)*perSec-1 {
		return nil, newError(col, v, "is out of range as "+name+" since 1970-01-01: "+yearRange)
	}
	sec, sub := i/perSec, i%perSec
	if sub < 0 {
		sec, sub = sec-1, sub+perSec
	}
	t = time.Unix(sec, sub*unit).UTC()
	if n := nanoDigits(t.Nanosecond()); n > fd {
		return nil, newError(col, v, "is "+t.Format(time.RFC3339Nano)+" as "+name+" since 1970-01-01, and "+fracReason(n, fd))
	}
	return t, nil
}

// plainDateTime is toDateTime's fast path for the shape most date-times
// arrive in: "YYYY-MM-DD HH:MM:SS" ('T' may replace the space) with no
// fraction or one of 1 to 9 digits, no zone, a valid date and time, and no
// more significant fractional digits than fd. It returns what toDateTimeAny
// returns for such text; ok is false for anything else, which
// toDateTimeAny then reads (and refuses, when it must).
func plainDateTime(s string, fd int) (t time.Time, ok bool) {
	if len(s) < 19 || len(s) == 20 || len(s) > 29 || s[16] != ':' {
		return t, false
	}
	// "YYYY-MM-" and "DD HH:MM" are read as two words: their separators
	// checked by one comparison each, their digits by one test each (see
	// digitPairs), instead of a load and a test per byte.
	w0, w1 := word(s), word(s[8:])
	const (
		sep0  = uint64('-')<<32 | uint64('-')<<56 // bytes 4 and 7
		mask0 = 0xff<<32 | 0xff<<56
		sep1  = uint64(':') << 40 // byte 5; byte 2 is ' ' or 'T'
		mask1 = 0xff << 40
	)
	if w0&mask0 != sep0 || w1&mask1 != sep1 || s[10] != ' ' && s[10] != 'T' {
		return t, false
	}
	p0, ok0 := digitPairs(w0, mask0)
	p1, ok1 := digitPairs(w1, mask1|0xff<<16)
	sec, ok2 := twoDigits(s, 17)
	if !(ok0 && ok1 && ok2) {
		return t, false
	}
	y := int(p0&0xff)*100 + int(p0>>16&0xff)
	mo, d, h, mi := int(p0>>40&0xff), int(p1&0xff), int(p1>>24&0xff), int(p1>>48&0xff)
	if y < 1 || mo < 1 || mo > 12 || d < 1 || d > DaysIn(y, mo) || h > 23 || mi > 59 || sec > 59 {
		return t, false
	}
	nsec := 0
	if len(s) > 19 {
		if s[19] != '.' {
			return t, false
		}
		significant := 0
		for i := 20; i < len(s); i++ {
			c := s[i] - '0' // a byte below '0' wraps above 9
			if c > 9 {
				return t, false
			}
			nsec = nsec*10 + int(c)
			if c != 0 {
				significant = i - 19
			}
		}
		if significant > fd {
			return t, false
		}
		// The 1 to 9 digits read scaled to nanoseconds by one product.
		nsec *= nanoScale[29-len(s)]
	}
	// time.Date would give the same Time, but spends a third of this path
	// normalising fields that are already valid and looking up the zone.
	days := CivilDays(y, mo, d)
	return time.Unix(days*86400+int64(h*3600+mi*60+sec), int64(nsec)).UTC(), true
}

// digitPairs reads the 8 bytes of w, a little-endian word of text, as
// digits, but for the bytes seps masks (separators, checked apart): ok
// reports whether every other byte is one of '0' to '9', and byte i of
// pairs, for i from 0 to 6, is the number the digits at i and i+1 make
// (10*digit(i) + digit(i+1); a masked byte counts as 0).
func digitPairs(w, seps uint64) (pairs uint64, ok bool) {
	const (
		zeros = 0x3030303030303030
		high  = 0x8080808080808080
		above = 0x4646464646464646 // pushes a byte above '9' past 0x7f
	)
	x := w&^seps | zeros&seps
	// A digit keeps its high bit clear in x, x + above and x - zeros. Any
	// other byte sets it in one of them: 0x80 and up in x itself, a byte
	// above '9' (and below 0x80, so no carry) in x + above, one below '0'
	// in x - zeros (the borrow it takes from the byte above it makes no
	// difference: ok is false all the same).
	if (x|(x+above)|(x-zeros))&high != 0 {
		return 0, false
	}
	v := x - zeros           // each byte its digit, 0 to 9, no borrow
	return v*10 + v>>8, true // at most 99 a byte: no carry
}

// nanoScale holds the powers of ten that scale a fraction of 9-n digits to
// nanoseconds (see plainDateTime).
var nanoScale = [...]int{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8}

// CivilDays returns the number of days from 1970-01-01 to the valid date
// y-m-d of the proleptic Gregorian calendar, for years 1 to 9999. It counts
// years from March, so that the leap day ends a year, in eras of 400 years
// (146097 days), after Howard Hinnant's days_from_civil.
func CivilDays(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400 // y >= 0 here: no rounding toward zero to correct
	yoe := y - era*400
	mp := m + 9 // months since March
	if m > 2 {
		mp = m - 3
	}
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// twoDigits reads the two decimal digits at s[i:i+2]; ok is false when they
// are not both digits. s must hold them.
func twoDigits(s string, i int) (v int, ok bool) {
	a, b := s[i]-'0', s[i+1]-'0' // a byte below '0' wraps above 9
	return int(a)*10 + int(b), a <= 9 && b <= 9
}

// parseClock reads "[-]H[H[H]]:MM:SS[.f…]" and returns the signed duration
// in nanoseconds and its significant fractional-second digits.
func parseClock(s string) (ns int64, fracN int, reason string) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	hlen := i - start
	if hlen < 1 || hlen > 3 {
		return 0, 0, timeSyntax
	}
	h, _ := digits(s, start, hlen)
	if i+6 > len(s) || s[i] != ':' || s[i+3] != ':' {
		return 0, 0, timeSyntax
	}
	m, ok1 := digits(s, i+1, 2)
	sec, ok2 := digits(s, i+4, 2)
	if !ok1 || !ok2 {
		return 0, 0, timeSyntax
	}
	if m > 59 || sec > 59 {
		return 0, 0, "is not a valid time: minutes and seconds go up to 59"
	}
	i += 6
	nsec := 0
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == fs {
			return 0, 0, timeSyntax
		}
		nsec, fracN = fraction(s[fs:i])
	}
	if i != len(s) {
		return 0, 0, timeSyntax
	}
	ns = int64(h*3600+m*60+sec)*int64(time.Second) + int64(nsec)
	if ns > maxTime {
		return 0, 0, "is out of range: " + timeRange
	}
	if neg {
		ns = -ns
	}
	return ns, fracN, ""
}

// formatClock returns "[-]HH:MM:SS[.f…]" for a signed duration in
// nanoseconds, with the fraction's trailing zeros dropped.
func formatClock(ns int64) string {
	b := make([]byte, 0, 20)
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	sec := ns / int64(time.Second)
	frac := int(ns % int64(time.Second))
	b = appendPadded(b, int(sec/3600), 2)
	b = append(b, ':')
	b = appendPadded(b, int(sec/60%60), 2)
	b = append(b, ':')
	b = appendPadded(b, int(sec%60), 2)
	if frac != 0 {
		b = append(b, '.')
		b = appendPadded(b, frac, 9)
		b = b[:len(b)-9+nanoDigits(frac)]
	}
	return string(b)
}

// toTime converts v for a time-of-day column and returns
// "[-]HH:MM:SS[.f…]" (the fraction only when non-zero, without trailing
// zeros). MySQL's TIME range applies: -838:59:59 to 838:59:59.
//
// Accepted: a string "[-]HH:MM:SS[.f…]" with one to three hour digits; an
// integer (Number or Go integer), Debezium's form: milliseconds since
// midnight (io.debezium.time.Time) when the column keeps at most 3
// fractional-second digits, microseconds (io.debezium.time.MicroTime) when it
// keeps 4 to 6, negative for a negative MySQL TIME; a time.Time, whose clock
// time in its own location is taken. Non-zero fractional-second digits beyond
// the column's FracDigits are refused.
func toTime(col *schema.Column, v changelog.Value) (any, error) {
	fd := fracDigits(col)
	switch x := v.(type) {
	case string:
		ns, fracN, reason := parseClock(x)
		if reason != "" {
			return nil, newError(col, v, reason)
		}
		if fracN > fd {
			return nil, newError(col, v, fracReason(fracN, fd))
		}
		return formatClock(ns), nil
	case time.Time:
		h, m, s := x.Clock()
		if n := nanoDigits(x.Nanosecond()); n > fd {
			return nil, newError(col, v, fracReason(n, fd))
		}
		return formatClock(int64(h*3600+m*60+s)*int64(time.Second) + int64(x.Nanosecond())), nil
	}
	n, reason, badType := readInteger(normalize(v), false, false)
	if badType {
		return nil, typeError(col, v)
	}
	if reason != "" {
		return nil, newError(col, v, reason)
	}
	unit, name := unitNanos(col)
	i, ok := n.int64Value()
	if !ok || i < -maxTime/unit || i > maxTime/unit {
		return nil, newError(col, v, "is out of range as "+name+" since midnight: "+timeRange)
	}
	ns := i * unit
	abs := ns
	if abs < 0 {
		abs = -abs
	}
	if d := nanoDigits(int(abs % int64(time.Second))); d > fd {
		return nil, newError(col, v, "is "+formatClock(ns)+" as "+name+" since midnight, and "+fracReason(d, fd))
	}
	return formatClock(ns), nil
}
