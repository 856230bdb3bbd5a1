// Package bulktext writes field text in the tab-separated format that
// MySQL's LOAD DATA and PostgreSQL's COPY read by default, and reads it
// back: fields end at a tab, rows at a newline, and a backslash starts an
// escape. txsink's loaders and its bench's reference dumps write it, and
// the bench's SQLite load reads it, so the escaping rules live here once.
package bulktext

import "strings"

// AppendEscaped appends s with the bytes that would end a field or a row,
// or start an escape, written as backslash escapes: \\, \t, \n, \r; with
// nul, NUL as \0 too (LOAD DATA's spelling; COPY text cannot carry a NUL,
// and the server refuses one either way). Byte by byte is right for UTF-8
// and for binary data alike: no byte of a multibyte UTF-8 character is
// ASCII.
func AppendEscaped[S string | []byte](b []byte, s S, nul bool) []byte {
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

// AppendDate appends the date year-month-day as YYYY-MM-DD, the form both
// servers read. year must be 1 to 9999.
func AppendDate(b []byte, year, month, day int) []byte {
	b = appendDigits(b, year, 4)
	b = appendDigits(append(b, '-'), month, 2)
	return appendDigits(append(b, '-'), day, 2)
}

// AppendClock appends a time of day as hh:mm:ss, then a point and the
// nanoseconds without their trailing zeros when nsec is not 0.
func AppendClock(b []byte, hour, minute, sec, nsec int) []byte {
	b = appendDigits(b, hour, 2)
	b = appendDigits(append(b, ':'), minute, 2)
	b = appendDigits(append(b, ':'), sec, 2)
	if nsec == 0 {
		return b
	}
	digits := 9
	for nsec%10 == 0 {
		nsec /= 10
		digits--
	}
	return appendDigits(append(b, '.'), nsec, digits)
}

// appendDigits appends n (0 or more) in exactly width decimal digits (at
// most 9). Writing them directly is what makes these faster than
// time.AppendFormat, which reads its layout on every call.
func appendDigits(b []byte, n, width int) []byte {
	var d [9]byte
	for i := width - 1; i >= 0; i-- {
		d[i] = byte('0' + n%10)
		n /= 10
	}
	return append(b, d[:width]...)
}

// Unescape reads one field of that format back: \t, \n and \r are the
// bytes they name, and a backslash before any other byte stands for that
// byte (so \\ is a backslash). It undoes AppendEscaped without nul. A
// lone backslash at the end stays as it is.
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
