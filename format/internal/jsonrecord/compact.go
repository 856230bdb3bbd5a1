package jsonrecord

import (
	"encoding/binary"
	"math/bits"

	"github.com/txsink/txsink/format/internal/jsonscan"
)

// The in-place readers below (ScanString, ScanUint, NullEnd, QuotedEnd,
// Key16) read JSON text of the one shape most producers write a small
// object in: no white space, plain keys and strings. They are a decoder's
// fast path ahead of the general scanner: each takes the offset the step
// before it ended at and returns where it ends, or -1 when the text there
// is not of that shape, and -1 matches nothing after it; a caller whose
// steps failed reads the text the general way from where it began.
//
// What they accept, the scanner accepts too, with the same meaning: plain
// strings (ASCII other than control characters, '"' and '\\': text with
// no escape, whose value is its bytes) and whole numbers written without
// a sign, fraction or exponent. Anything else fails them (white space, an
// escape, a byte past ASCII, a fraction), so no check on input is lost:
// the general way refuses what is wrong.

// ScanString reads the plain string at d[i], or when null is set a null
// (nil), and returns the offset just past it and its value, a view of d;
// -1 and nil when there is none there or i is -1. The caller keeps the
// offset itself, in a register, through a block of a dozen members: a
// cursor kept in memory cost a third more a step.
func ScanString(d []byte, i int, null bool) (int, []byte) {
	if i < 0 || i >= len(d) {
		return -1, nil
	}
	if d[i] != '"' {
		if null && len(d)-i >= 4 && binary.LittleEndian.Uint32(d[i:i+4]) == litNull {
			return i + 4, nil
		}
		return -1, nil
	}
	j := i + 1
	// Eight bytes at a time up to the first that is not plain, which
	// must be the closing quote: a name or a version is a word or two.
	for ; len(d)-j >= 8; j += 8 {
		if m := jsonscan.Special8(binary.LittleEndian.Uint64(d[j : j+8])); m != 0 {
			j += bits.TrailingZeros64(m) >> 3
			if d[j] != '"' {
				return -1, nil
			}
			return j + 1, d[i+1 : j]
		}
	}
	for ; j < len(d); j++ {
		switch b := d[j]; {
		case b == '"':
			return j + 1, d[i+1 : j]
		case b < 0x20 || b >= 0x80 || b == '\\':
			return -1, nil
		}
	}
	return -1, nil
}

// QuotedEnd returns the offset just past the string at d[i], or -1 as
// ScanString does, for a string that is plain but for escaped
// quotes (\"), the way a producer writes JSON text inside a string: its
// value is its text with each backslash left out.
func QuotedEnd(d []byte, i int) int {
	if i < 0 || i >= len(d) || d[i] != '"' {
		return -1
	}
	for j := i + 1; j < len(d); j++ {
		switch b := d[j]; {
		case b == '"':
			return j + 1
		case b == '\\' && j+1 < len(d) && d[j+1] == '"':
			j++
		case b < 0x20 || b >= 0x80 || b == '\\':
			return -1
		}
	}
	return -1
}

// ScanUint is ScanString for a whole number written 0 or [1-9][0-9]*,
// followed by neither a fraction nor an exponent, its value its digits.
func ScanUint(d []byte, i int, null bool) (int, []byte) {
	if i < 0 || i >= len(d) {
		return -1, nil
	}
	j := i
	// Eight bytes at a time up to the first that is not a digit: a time
	// in milliseconds is thirteen digits.
	for ; len(d)-j >= 8; j += 8 {
		if m := jsonscan.NonDigit8(binary.LittleEndian.Uint64(d[j : j+8])); m != 0 {
			j += bits.TrailingZeros64(m) >> 3
			goto end
		}
	}
	for j < len(d) && '0' <= d[j] && d[j] <= '9' {
		j++
	}
end:
	if j == i {
		if null && len(d)-i >= 4 && binary.LittleEndian.Uint32(d[i:i+4]) == litNull {
			return i + 4, nil
		}
		return -1, nil
	}
	if d[i] == '0' && j > i+1 || j < len(d) && (d[j] == '.' || d[j]|0x20 == 'e') {
		return -1, nil
	}
	return j, d[i:j]
}

// NullEnd returns the offset just past the null at d[i], or -1 when
// there is none there (or i is -1).
func NullEnd(d []byte, i int) int {
	if i < 0 || len(d)-i < 4 || binary.LittleEndian.Uint32(d[i:i+4]) != litNull {
		return -1
	}
	return i + 4
}

// litNull is "null" as a little-endian word.
const litNull = 'n' | 'u'<<8 | 'l'<<16 | 'l'<<24

// Key16 is a member's key as written, with what comes before it (`,"name":`),
// of up to 16 bytes, made once (NewKey16): compared with a record's text
// as two words under a mask, in a few instructions inline, where a
// comparison of strings is a call.
type Key16 struct {
	w, m [2]uint64
	n    int
}

// NewKey16 returns key as a Key16; it panics when key is longer than 16
// bytes.
func NewKey16(key string) Key16 {
	if len(key) > 16 {
		panic("jsonrecord: Key16 " + key + " is longer than 16 bytes")
	}
	k := Key16{n: len(key)}
	for i := 0; i < len(key); i++ {
		k.w[i/8] |= uint64(key[i]) << (8 * (i % 8))
		k.m[i/8] |= 0xff << (8 * (i % 8))
	}
	return k
}

// End returns the offset just past k at d[i], or -1 when d does not hold
// k there, holds fewer than 16 bytes from there (a key is followed by
// its value), or i is -1.
func (k *Key16) End(d []byte, i int) int {
	if i < 0 || len(d)-i < 16 {
		return -1
	}
	b := (*[16]byte)(d[i : i+16])
	if binary.LittleEndian.Uint64(b[:8])&k.m[0] != k.w[0] || binary.LittleEndian.Uint64(b[8:])&k.m[1] != k.w[1] {
		return -1
	}
	return i + k.n
}
