package postgres

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/txsink/txsink/coerce"
)

// COPY's binary format (see load.go's package comment for when it is
// used). Each column's encoding is chosen by the column's type OID, as the
// table's catalog gives it, never by txsink's class for it: a binary value
// must be exactly the type's receive function's input, while a text value
// only has to be something the type's input function reads. The receive
// functions of these types apply the column's type modifier as their input
// functions do (varchar(n) refuses what is too long, bpchar(n) pads,
// numeric(p,s) and timestamp(p) round), and text's verifies UTF-8 as the
// text path does; TestBinaryCopyMatchesText compares what both formats
// store, type by type, on the server.
//
// A group goes binary only when binaryValues finds every value in the
// form its encoder writes exactly (the Go type coerce gives the column's
// class, in the range the text path would send); any other group, or one
// with a column of another type, goes as text, so the binary path never
// refuses what the text path would have written.

// binKind is how one column's values are written in binary.
type binKind uint8

const (
	binNone      binKind = iota // no binary encoding: the group goes as text
	binInt2                     // int64 in int16's range, 2 bytes
	binInt4                     // int64 in int32's range, 4 bytes
	binInt8                     // int64, 8 bytes
	binFloat4                   // float64 exactly a float32, its 4 bytes
	binFloat8                   // float64, its 8 bytes
	binBool                     // bool, 1 byte
	binText                     // string as is: text, varchar, bpchar, json
	binJSONB                    // string after jsonb's version byte 1
	binBytea                    // []byte as is
	binNumeric                  // canonical decimal text, as base-10000 digits
	binDate                     // "YYYY-MM-DD" or a time.Time's UTC date, days since 2000-01-01
	binTimestamp                // time.Time, microseconds since 2000-01-01 UTC (wall clock or instant)
	binTime                     // "HH:MM:SS[.ffffff]" up to 24:00:00, microseconds since midnight
	binUUID                     // "8-4-4-4-12" hex digits, 16 bytes
)

// binKinds maps the type OIDs with a binary encoding to it. Absent on
// purpose: name (its input function truncates, its receive function
// refuses), citext and every type of an extension (OIDs vary), domains
// (their OID is their own), arrays, enums, intervals.
var binKinds = map[uint32]binKind{
	21:   binInt2,
	23:   binInt4,
	20:   binInt8,
	700:  binFloat4,
	701:  binFloat8,
	16:   binBool,
	25:   binText, // text
	1043: binText, // varchar
	1042: binText, // bpchar
	114:  binText, // json
	3802: binJSONB,
	17:   binBytea,
	1700: binNumeric,
	1082: binDate,
	1114: binTimestamp,
	1184: binTimestamp, // timestamptz: the instant, in the same unit
	1083: binTime,
	2950: binUUID,
}

// pgEpochUnix is 2000-01-01 00:00:00 UTC, the origin of PostgreSQL's
// binary dates and timestamps, in Unix seconds.
const pgEpochUnix = 946684800

// minUnix and maxUnix bound the instants of years 1 to 9999 UTC, which
// coerce lets through, in Unix seconds: 0001-01-01 and 10000-01-01.
const (
	minUnix = -62135596800
	maxUnix = 253402300800
)

// maxBinNumeric bounds the text of a numeric sent in binary: numeric_recv
// takes at most 3000 base-10000 digits, numeric_in many more, so a longer
// value goes as text.
const maxBinNumeric = 11000

// copyBinaryHeader starts a binary COPY stream: the signature, no flags,
// no header extension.
const copyBinaryHeader = "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00"

// binaryValues reports whether every value of rows is in the form its
// column's binary encoder writes exactly (see above); kinds has no
// binNone. It goes column by column, the kind's test chosen once for the
// column: a test per value cost more than encoding most of them.
func binaryValues(kinds []binKind, rows [][]any) bool {
	for i, k := range kinds {
		switch k {
		case binInt8:
			for _, row := range rows {
				if _, ok := row[i].(int64); !ok && row[i] != nil {
					return false
				}
			}
		case binFloat8:
			for _, row := range rows {
				if _, ok := row[i].(float64); !ok && row[i] != nil {
					return false
				}
			}
		case binBool:
			for _, row := range rows {
				if _, ok := row[i].(bool); !ok && row[i] != nil {
					return false
				}
			}
		case binText, binJSONB:
			for _, row := range rows {
				if _, ok := row[i].(string); !ok && row[i] != nil {
					return false
				}
			}
		case binBytea:
			for _, row := range rows {
				if _, ok := row[i].([]byte); !ok && row[i] != nil {
					return false
				}
			}
		case binInt4:
			for _, row := range rows {
				if n, ok := row[i].(int64); ok {
					if n < math.MinInt32 || n > math.MaxInt32 {
						return false
					}
				} else if row[i] != nil {
					return false
				}
			}
		case binNumeric:
			for _, row := range rows {
				if s, ok := row[i].(string); ok {
					if len(s) > maxBinNumeric || !plainDecimal(s) {
						return false
					}
				} else if row[i] != nil {
					return false
				}
			}
		default:
			for _, row := range rows {
				if v := row[i]; v != nil && !binaryValue(k, v) {
					return false
				}
			}
		}
	}
	return true
}

// binaryValue reports whether appendBinary writes v exactly for kind k.
func binaryValue(k binKind, v any) bool {
	switch k {
	case binInt2:
		n, ok := v.(int64)
		return ok && n >= math.MinInt16 && n <= math.MaxInt16
	case binInt4:
		n, ok := v.(int64)
		return ok && n >= math.MinInt32 && n <= math.MaxInt32
	case binInt8:
		_, ok := v.(int64)
		return ok
	case binFloat4:
		f, ok := v.(float64)
		return ok && float64(float32(f)) == f
	case binFloat8:
		_, ok := v.(float64)
		return ok
	case binBool:
		_, ok := v.(bool)
		return ok
	case binText, binJSONB:
		_, ok := v.(string)
		return ok
	case binBytea:
		_, ok := v.([]byte)
		return ok
	case binNumeric:
		s, ok := v.(string)
		return ok && len(s) <= maxBinNumeric && plainDecimal(s)
	case binDate:
		switch v := v.(type) {
		case string:
			_, ok := parseDate(v)
			return ok
		case time.Time:
			sec := v.Unix()
			return sec >= minUnix && sec < maxUnix
		}
		return false
	case binTimestamp:
		t, ok := v.(time.Time)
		if !ok {
			return false
		}
		// The text path writes the nanoseconds, which the server rounds
		// to microseconds; only whole microseconds are sent the same.
		sec := t.Unix()
		return sec >= minUnix && sec < maxUnix && t.Nanosecond()%1000 == 0
	case binTime:
		s, ok := v.(string)
		if !ok {
			return false
		}
		_, ok = parseTime(s)
		return ok
	case binUUID:
		s, ok := v.(string)
		if !ok {
			return false
		}
		_, ok = parseUUID(s)
		return ok
	}
	return false
}

// appendBinaryRow appends one row of binary COPY: the field count, then
// each field's length (-1 for NULL) and bytes. Every value passed
// binaryValue. The commonest kinds are written here, without a call.
func appendBinaryRow(dst []byte, kinds []binKind, row []any) []byte {
	dst = append(dst, byte(len(row)>>8), byte(len(row)))
	for i, v := range row {
		switch k := kinds[i]; {
		case v == nil:
			dst = append(dst, 0xff, 0xff, 0xff, 0xff)
		case k == binInt8:
			n := v.(int64)
			dst = append(dst, 0, 0, 0, 8, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32), byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
		case k == binInt4:
			n := v.(int64)
			dst = append(dst, 0, 0, 0, 4, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
		case k == binText:
			s := v.(string)
			dst = append(dst, byte(len(s)>>24), byte(len(s)>>16), byte(len(s)>>8), byte(len(s)))
			dst = append(dst, s...)
		default:
			dst = appendBinary(dst, k, v)
		}
	}
	return dst
}

// appendBinary appends v's length and binary form for kind k.
func appendBinary(dst []byte, k binKind, v any) []byte {
	switch k {
	case binInt2:
		return binary.BigEndian.AppendUint16(append(dst, 0, 0, 0, 2), uint16(v.(int64)))
	case binInt4:
		return binary.BigEndian.AppendUint32(append(dst, 0, 0, 0, 4), uint32(v.(int64)))
	case binInt8:
		return binary.BigEndian.AppendUint64(append(dst, 0, 0, 0, 8), uint64(v.(int64)))
	case binFloat4:
		return binary.BigEndian.AppendUint32(append(dst, 0, 0, 0, 4), math.Float32bits(float32(v.(float64))))
	case binFloat8:
		return binary.BigEndian.AppendUint64(append(dst, 0, 0, 0, 8), math.Float64bits(v.(float64)))
	case binBool:
		if v.(bool) {
			return append(dst, 0, 0, 0, 1, 1)
		}
		return append(dst, 0, 0, 0, 1, 0)
	case binText:
		s := v.(string)
		return append(binary.BigEndian.AppendUint32(dst, uint32(len(s))), s...)
	case binJSONB:
		s := v.(string)
		return append(append(binary.BigEndian.AppendUint32(dst, uint32(len(s)+1)), 1), s...)
	case binBytea:
		b := v.([]byte)
		return append(binary.BigEndian.AppendUint32(dst, uint32(len(b))), b...)
	case binNumeric:
		return appendNumeric(dst, v.(string))
	case binDate:
		var days int64
		switch v := v.(type) {
		case string:
			days, _ = parseDate(v)
		case time.Time:
			y, m, d := v.UTC().Date()
			days = daysFromCivil(y, int(m), d)
		}
		return binary.BigEndian.AppendUint32(append(dst, 0, 0, 0, 4), uint32(int32(days)))
	case binTimestamp:
		t := v.(time.Time)
		us := (t.Unix()-pgEpochUnix)*1e6 + int64(t.Nanosecond()/1000)
		return binary.BigEndian.AppendUint64(append(dst, 0, 0, 0, 8), uint64(us))
	case binTime:
		us, _ := parseTime(v.(string))
		return binary.BigEndian.AppendUint64(append(dst, 0, 0, 0, 8), uint64(us))
	case binUUID:
		u, _ := parseUUID(v.(string))
		return append(append(dst, 0, 0, 0, 16), u[:]...)
	}
	panic("postgres: binary COPY of a value binaryValue did not check")
}

// plainDecimal reports whether s is -?D+(.D+)?: coerce's canonical
// decimal text, which appendNumeric reads.
func plainDecimal(s string) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	// One pass: every byte a digit but for one point, which has digits
	// on both sides.
	dot := -1
	for i := 0; i < len(s); i++ {
		if c := s[i]; c-'0' > 9 {
			if c != '.' || dot >= 0 {
				return false
			}
			dot = i
		}
	}
	return len(s) > 0 && dot != 0 && dot != len(s)-1
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// appendNumeric appends the binary numeric of plain decimal text s: the
// count of base-10000 digits, the weight of the first, the sign, the
// display scale (the fractional digits as written, as numeric_in keeps
// them) and the digits, grouped by fours from the decimal point. Leading
// zero digits are left out, as numeric_in leaves them out; trailing ones
// are kept (numeric_recv drops them, as numeric_in does).
func appendNumeric(dst []byte, s string) []byte {
	sign := byte(0)
	if s[0] == '-' {
		sign, s = 0x40, s[1:]
	}
	intPart, frac := s, ""
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			intPart, frac = s[:i], s[i+1:]
			break
		}
	}
	dscale := len(frac)
	for len(intPart) > 0 && intPart[0] == '0' {
		intPart = intPart[1:]
	}
	// The header's place (length, count, weight, sign, scale), then the
	// digits: the integer part's groups, the first one short, then the
	// fraction's, the last one padded with zeros.
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	weight := (len(intPart)+3)/4 - 1
	n := 0
	put := func(g int) {
		if n == 0 && g == 0 {
			weight--
			return
		}
		dst = append(dst, byte(g>>8), byte(g))
		n++
	}
	if r := len(intPart) % 4; r > 0 {
		put(group(intPart[:r]))
		intPart = intPart[r:]
	}
	for ; len(intPart) >= 4; intPart = intPart[4:] {
		put(int(intPart[0]-'0')*1000 + int(intPart[1]-'0')*100 + int(intPart[2]-'0')*10 + int(intPart[3]-'0'))
	}
	for ; len(frac) >= 4; frac = frac[4:] {
		put(int(frac[0]-'0')*1000 + int(frac[1]-'0')*100 + int(frac[2]-'0')*10 + int(frac[3]-'0'))
	}
	if len(frac) > 0 {
		g := group(frac)
		for k := len(frac); k < 4; k++ {
			g *= 10
		}
		put(g)
	}
	if n == 0 {
		sign, weight = 0, 0
	}
	size := 8 + 2*n
	h := dst[at : at+12]
	h[0], h[1], h[2], h[3] = byte(size>>24), byte(size>>16), byte(size>>8), byte(size)
	h[4], h[5] = byte(n>>8), byte(n)
	h[6], h[7] = byte(weight>>8), byte(weight)
	h[8], h[9] = sign, 0
	h[10], h[11] = byte(dscale>>8), byte(dscale)
	return dst
}

// group returns the value of up to four decimal digits.
func group(s string) int {
	g := 0
	for i := 0; i < len(s); i++ {
		g = g*10 + int(s[i]-'0')
	}
	return g
}

// parseDate returns the days from 2000-01-01 to the date YYYY-MM-DD, year
// 1 to 9999, false for any other text (which the text path sends for the
// server to judge).
func parseDate(s string) (int64, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	y, ok1 := digitsOf(s[0:4])
	m, ok2 := digitsOf(s[5:7])
	d, ok3 := digitsOf(s[8:10])
	if !ok1 || !ok2 || !ok3 || y < 1 || m < 1 || m > 12 || d < 1 || d > coerce.DaysIn(y, m) {
		return 0, false
	}
	return daysFromCivil(y, m, d), true
}

// digitsOf returns the value of s, all decimal digits.
func digitsOf(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// pgEpochDays is PostgreSQL's epoch, 2000-01-01, in days from 1970-01-01.
const pgEpochDays = 10957

// daysFromCivil returns the days from PostgreSQL's epoch to the valid
// date y-m-d.
func daysFromCivil(y, m, d int) int64 { return coerce.CivilDays(y, m, d) - pgEpochDays }

// parseTime returns the microseconds since midnight of HH:MM:SS with up
// to six fractional digits, at most 24:00:00 (what time_in reads the
// same); false for any other text: negative or later times, which the
// server refuses, go as text for it to say so.
func parseTime(s string) (int64, bool) {
	if len(s) < 8 || s[2] != ':' || s[5] != ':' {
		return 0, false
	}
	h, ok1 := digitsOf(s[0:2])
	m, ok2 := digitsOf(s[3:5])
	sec, ok3 := digitsOf(s[6:8])
	if !ok1 || !ok2 || !ok3 || m > 59 || sec > 59 {
		return 0, false
	}
	us := int64(0)
	if f := s[8:]; len(f) > 0 {
		if f[0] != '.' || len(f) < 2 || len(f) > 7 {
			return 0, false
		}
		n, ok := digitsOf(f[1:])
		if !ok {
			return 0, false
		}
		for range 7 - len(f) {
			n *= 10
		}
		us = int64(n)
	}
	us += int64(h*3600+m*60+sec) * 1e6
	return us, us <= 24*3600*1e6
}

// parseUUID reads a UUID written as 32 hex digits in groups of 8-4-4-4-12
// or without dashes (a subset of what uuid_in reads; the rest goes as
// text).
func parseUUID(s string) ([16]byte, bool) {
	var u [16]byte
	dashes := len(s) == 36
	if !dashes && len(s) != 32 {
		return u, false
	}
	j := 0
	for i := range u {
		if dashes && (i == 4 || i == 6 || i == 8 || i == 10) {
			if s[j] != '-' {
				return u, false
			}
			j++
		}
		hi, ok1 := hexVal(s[j])
		lo, ok2 := hexVal(s[j+1])
		if !ok1 || !ok2 {
			return u, false
		}
		u[i] = hi<<4 | lo
		j += 2
	}
	return u, true
}

func hexVal(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
