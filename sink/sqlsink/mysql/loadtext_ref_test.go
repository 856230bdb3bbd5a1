package mysql

// The LOAD DATA text encoder as it was before issue #31's round (main at
// 6173688), with the bulktext functions it called then: the reference
// TestEncoderMatchesReference and FuzzEncoder hold the encoder to, byte
// for byte. Keep it as it is.

import (
	"database/sql/driver"
	"fmt"
	"reflect"
	"strconv"
	"time"
)

// refRow appends one row and its line terminator.
func refRow(b []byte, row []any) ([]byte, error) {
	for i, v := range row {
		if i > 0 {
			b = append(b, '\t')
		}
		var err error
		if b, err = refField(b, v); err != nil {
			return b, fmt.Errorf("field %d: %w", i+1, err)
		}
	}
	return append(b, '\n'), nil
}

// refField appends v as the statement path would send it (the
// driver's client-side interpolation, see Bind), in LOAD DATA's text form:
// integers and floats in the same digits, booleans as 1 and 0, date-times
// in UTC (the session's zone) with their fractional digits and no
// trailing zeros, strings and bytes unchanged but for the escapes, and
// NULL as \N. Other Go types go through database/sql's own conversion
// first, as they would on the way to the driver.
func refField(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, '\\', 'N'), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case string:
		return refEscaped(b, x, true), nil
	case []byte:
		return refEscaped(b, x, true), nil
	case float64:
		return strconv.AppendFloat(b, x, 'g', -1, 64), nil
	case bool:
		if x {
			return append(b, '1'), nil
		}
		return append(b, '0'), nil
	case time.Time:
		return refDateTime(b, x.UTC())
	}
	cv, err := driver.DefaultParameterConverter.ConvertValue(v)
	if err != nil {
		return b, fmt.Errorf("value of type %T: %w", v, err)
	}
	if cv != nil && reflect.TypeOf(cv) == reflect.TypeOf(v) {
		return b, fmt.Errorf("value of type %T has no LOAD DATA text form", v)
	}
	return refField(b, cv)
}

// refDateTime writes t as the driver does: the date alone at midnight,
// else the time of day, with as many fractional digits as are not zero.
func refDateTime(b []byte, t time.Time) ([]byte, error) {
	year, month, day := t.Date()
	if year < 1 || year > 9999 {
		return b, fmt.Errorf("date-time %s: year is not in the range 1 to 9999", t.Format(time.RFC3339Nano))
	}
	b = refDate(b, year, int(month), day)
	hour, minute, sec := t.Clock()
	nsec := t.Nanosecond()
	if hour == 0 && minute == 0 && sec == 0 && nsec == 0 {
		return b, nil
	}
	return refClock(append(b, ' '), hour, minute, sec, nsec), nil
}

// refEscaped appends s with the bytes that would end a field or a row,
// or start an escape, written as backslash escapes: \\, \t, \n, \r; with
// nul, NUL as \0 too (LOAD DATA's spelling; COPY text cannot carry a NUL,
// and the server refuses one either way). Byte by byte is right for UTF-8
// and for binary data alike: no byte of a multibyte UTF-8 character is
// ASCII.
func refEscaped[S string | []byte](b []byte, s S, nul bool) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		var e byte
		switch s[i] {
		case '\\':
			e = '\\'
		case '\t':
			e = 't'
		case '\n':
			e = 'n'
		case '\r':
			e = 'r'
		case 0:
			if !nul {
				continue
			}
			e = '0'
		default:
			continue
		}
		b = append(b, s[start:i]...)
		b = append(b, '\\', e)
		start = i + 1
	}
	return append(b, s[start:]...)
}

// refDate appends the date year-month-day as YYYY-MM-DD, the form both
// servers read. year must be 1 to 9999.
func refDate(b []byte, year, month, day int) []byte {
	b = refDigits(b, year, 4)
	b = refDigits(append(b, '-'), month, 2)
	return refDigits(append(b, '-'), day, 2)
}

// refClock appends a time of day as hh:mm:ss, then a point and the
// nanoseconds without their trailing zeros when nsec is not 0.
func refClock(b []byte, hour, minute, sec, nsec int) []byte {
	b = refDigits(b, hour, 2)
	b = refDigits(append(b, ':'), minute, 2)
	b = refDigits(append(b, ':'), sec, 2)
	if nsec == 0 {
		return b
	}
	digits := 9
	for nsec%10 == 0 {
		nsec /= 10
		digits--
	}
	return refDigits(append(b, '.'), nsec, digits)
}

// refDigits appends n (0 or more) in exactly width decimal digits (at
// most 9). Writing them directly is what makes these faster than
// time.AppendFormat, which reads its layout on every call.
func refDigits(b []byte, n, width int) []byte {
	var d [9]byte
	for i := width - 1; i >= 0; i-- {
		d[i] = byte('0' + n%10)
		n /= 10
	}
	return append(b, d[:width]...)
}
