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
//
// Most values have none of those bytes, so a scan eight bytes at a time
// (plain decides) comes first, and such a value is appended whole.
func AppendEscaped[S string | []byte](b []byte, s S, nul bool) []byte {
	if plain(s) {
		return append(b, s...)
	}
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

// Bytes repeated in each of a word's eight lanes, for the scans of plain.
const (
	lanes1   = 0x0101010101010101
	lanesTop = 0x8080808080808080
)

// plain reports whether s holds no byte below 0x20 and no backslash, so no
// byte AppendEscaped escapes (every one of them is among those). It reads
// s a word at a time, the last word overlapping the one before; a value
// shorter than a word is read in two overlapping halves, or byte by byte
// below four bytes.
func plain[S string | []byte](s S) bool {
	n := len(s)
	switch {
	case n >= 8:
		for i := 0; i < n-8; i += 8 {
			if !plainWord(load64(s, i)) {
				return false
			}
		}
		return plainWord(load64(s, n-8))
	case n >= 4:
		return plainWord(uint64(load32(s, 0)) | uint64(load32(s, n-4))<<32)
	}
	for i := 0; i < n; i++ {
		if c := s[i]; c < 0x20 || c == '\\' {
			return false
		}
	}
	return true
}

// plainWord reports whether none of w's bytes is below 0x20 or a
// backslash: the classic tests for a byte below n, (w - n*lanes1) &^ w,
// and for a zero byte after w ^ '\\'*lanes1, whose top bits are set in
// a lane only if some lane holds such a byte.
func plainWord(w uint64) bool {
	bs := w ^ '\\'*lanes1
	return ((w-0x20*lanes1)&^w|(bs-lanes1)&^bs)&lanesTop == 0
}

// load64 reads s[i:i+8] as a little-endian word (the compiler makes it
// one load).
func load64[S string | []byte](s S, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// load32 reads s[i:i+4] as a little-endian word.
func load32[S string | []byte](s S, i int) uint32 {
	s = s[i : i+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
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
