// Package bulktext writes field text in the tab-separated format that
// MySQL's LOAD DATA and PostgreSQL's COPY read by default, and reads it
// back: fields end at a tab, rows at a newline, and a backslash starts an
// escape. txsink's loaders and its bench's reference dumps write it, and
// the bench's SQLite load reads it, so the escaping rules live here once.
package bulktext

import (
	"math/bits"
	"slices"
	"strings"
	"time"
)

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

// A Clock says which part of a date-time AppendDateTime writes.
type Clock int

const (
	// DateOnly writes the date alone.
	DateOnly Clock = iota
	// WithClock writes the date and the time of day.
	WithClock
	// ClockUnlessMidnight writes the date alone when the time of day is
	// 00:00:00 exactly, as MySQL's driver writes a DATETIME.
	ClockUnlessMidnight
)

// The Unix seconds of 0001-01-01 00:00:00 UTC and of 10000-01-01: the
// years both servers read in four digits.
const (
	minUnix = -62135596800
	maxUnix = 253402300800
)

// AppendDateTime appends t's UTC date as YYYY-MM-DD and, as c says, its
// time of day after a space as hh:mm:ss, then a point and the nanoseconds
// without their trailing zeros when they are not 0: the text
// t.UTC().Format("2006-01-02 15:04:05.999999999") writes. It reports
// false, appending nothing, when t's UTC year is not 1 to 9999.
func AppendDateTime(b []byte, t time.Time, c Clock) ([]byte, bool) {
	var w DateTimes
	return w.Append(b, t, c)
}

// DateTimes writes date-times as AppendDateTime does, and keeps the last
// one's date: a group's rows mostly fall on one day, so most of them skip
// the calendar arithmetic. The zero value is ready for use; it is not safe
// for concurrent use.
type DateTimes struct {
	day  uint64 // days since 0001-01-01 of date, plus 1; 0 before the first
	date [10]byte
}

// Append appends t as AppendDateTime does.
//
// It works from t.Unix alone, the calendar by Hinnant's days-to-civil
// arithmetic and the digits by pairs from a table: a small part of the
// time package's Date, Clock and Format.
func (w *DateTimes) Append(b []byte, t time.Time, c Clock) ([]byte, bool) {
	unix := t.Unix()
	if unix < minUnix || unix >= maxUnix {
		return b, false
	}
	secs := uint64(unix - minUnix) // since 0001-01-01
	days := secs / 86400
	sod := secs - days*86400
	if days+1 != w.day {
		w.setDate(days)
	}
	var d [29]byte
	*(*[10]byte)(d[:10]) = w.date
	nsec := uint64(t.Nanosecond())
	if c == DateOnly || c == ClockUnlessMidnight && sod == 0 && nsec == 0 {
		return append(b, d[:10]...), true
	}
	d[10] = ' '
	hour, minute := sod/3600, sod/60
	put2(d[11:], hour)
	d[13] = ':'
	put2(d[14:], minute-hour*60)
	d[16] = ':'
	put2(d[17:], sod-minute*60)
	if nsec == 0 {
		return append(b, d[:19]...), true
	}
	d[19] = '.'
	// Whole milliseconds and microseconds are the common fractions:
	// write their digits only.
	n, ms := 23, nsec/1e6
	put2(d[20:], ms/10)
	d[22] = byte('0' + ms%10)
	if rest := nsec - ms*1e6; rest != 0 {
		us := rest / 1e3
		n = 26
		put2(d[23:], us/10)
		d[25] = byte('0' + us%10)
		if ns := rest - us*1e3; ns != 0 {
			n = 29
			put2(d[26:], ns/10)
			d[28] = byte('0' + ns%10)
		}
	}
	for d[n-1] == '0' {
		n--
	}
	return append(b, d[:n]...), true
}

// setDate writes the date of days since 0001-01-01 into w.
func (w *DateTimes) setDate(days uint64) {
	// Days since 0000-03-01, in 400-year eras: a year starting in March
	// puts the leap day last.
	z := days + 306
	era := z / 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	day := doy - (153*mp+2)/5 + 1
	month, year := mp+3, yoe+era*400
	if mp >= 10 {
		month, year = mp-9, year+1
	}
	d := w.date[:]
	century := year / 100
	put2(d[0:], century)
	put2(d[2:], year-century*100)
	d[4] = '-'
	put2(d[5:], month)
	d[7] = '-'
	put2(d[8:], day)
	w.day = days + 1
}

// AppendInt appends v in decimal, as strconv.AppendInt(b, v, 10) does.
func AppendInt(b []byte, v int64) []byte {
	if v >= 0 {
		return AppendUint(b, uint64(v))
	}
	return AppendUint(append(b, '-'), -uint64(v))
}

// AppendUint appends v in decimal, as strconv.AppendUint(b, v, 10) does.
// It counts the digits first and writes them in place, two at a time,
// where strconv writes them into an array of its own and copies that.
func AppendUint(b []byte, v uint64) []byte {
	if v < 10 {
		return append(b, byte('0'+v))
	}
	// The digits of v: ⌊log10 v⌋+1, from its bit length (1233/4096 is
	// just above log10 2), less one below the next power of ten.
	t := uint(bits.Len64(v)) * 1233 >> 12
	n := int(t) + 1
	if v < pow10[t&31] {
		n--
	}
	at := len(b)
	b = slices.Grow(b, n)[:at+n]
	d := b[at:]
	i := n
	for v >= 100 {
		q := v / 100
		i -= 2
		put2(d[i:], v-q*100)
		v = q
	}
	if v >= 10 {
		put2(d[:2], v)
	} else {
		d[0] = byte('0' + v)
	}
	return b
}

// pow10 holds the powers of ten a uint64 holds (from 1e0 to 1e19), for
// AppendUint; the rest of its 32 entries are never reached.
var pow10 = [32]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// pairs holds the two digits of 0 to 99, for put2.
var pairs = func() (p [100][2]byte) {
	for i := range p {
		p[i] = [2]byte{byte('0' + i/10), byte('0' + i%10)}
	}
	return p
}()

// put2 writes n (below 100) in two digits at d[0:2].
func put2(d []byte, n uint64) {
	*(*[2]byte)(d[:2]) = pairs[n]
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
