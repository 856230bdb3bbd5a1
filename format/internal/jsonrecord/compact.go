package jsonrecord

import (
	"encoding/binary"
	"math/bits"

	"github.com/txsink/txsink/format/internal/jsonscan"
)

// Compact reads, in place, JSON text of the one shape most producers
// write a small object or value in: no white space, plain keys and
// strings. It is a decoder's fast path for such text, ahead of the
// general scanner: each step either matches what the text holds at the
// cursor or fails the cursor, which then matches nothing more; a caller
// whose cursor failed reads the text the general way, from where the
// cursor began (nothing of the scanner has moved).
//
// What a cursor accepts, the scanner accepts too, with the same meaning:
// literal bytes the caller gives (keys, punctuation), plain strings
// (ASCII other than control characters, '"' and '\\': text with no
// escape, whose value is its bytes) and whole numbers written without a sign, fraction
// or exponent. Anything else fails it (white space, an escape, a byte
// past ASCII, a fraction), so no check on input is lost: the general
// way refuses what is wrong.
type Compact struct {
	d  []byte
	i  int
	ok bool
}

// At returns a cursor at the scanner's position.
func At(s *jsonscan.Scanner) Compact { return Compact{d: s.Data(), i: s.Pos(), ok: true} }

// OK reports whether every step so far matched.
func (c *Compact) OK() bool { return c.ok }

// Is reports whether the text at the cursor is the byte b, without
// moving (false once failed).
func (c *Compact) Is(b byte) bool { return c.ok && c.i < len(c.d) && c.d[c.i] == b }

// Lit matches the bytes lit.
func (c *Compact) Lit(lit string) {
	if c.ok && len(c.d)-c.i >= len(lit) && string(c.d[c.i:c.i+len(lit)]) == lit {
		c.i += len(lit)
		return
	}
	c.ok = false
}

// String matches a plain string and returns its value, a view of the
// text.
func (c *Compact) String() []byte {
	d, i := c.d, c.i
	if !c.ok || i >= len(d) || d[i] != '"' {
		c.ok = false
		return nil
	}
	j := i + 1
	// Eight bytes at a time up to the first that is not plain, which
	// must be the closing quote: a name or a version is a word or two.
	for ; len(d)-j >= 8; j += 8 {
		if m := special8(binary.LittleEndian.Uint64(d[j : j+8])); m != 0 {
			j += bits.TrailingZeros64(m) >> 3
			if d[j] != '"' {
				c.ok = false
				return nil
			}
			c.i = j + 1
			return d[i+1 : j]
		}
	}
	for ; j < len(d); j++ {
		switch b := d[j]; {
		case b == '"':
			c.i = j + 1
			return d[i+1 : j]
		case b < 0x20 || b >= 0x80 || b == '\\':
			c.ok = false
			return nil
		}
	}
	c.ok = false
	return nil
}

// special8 returns a mask whose lowest set bit is the high bit of the
// first of the eight bytes of x (little-endian) that is not plain: '"',
// '\\', a control character or a byte past ASCII; 0 when all eight are
// plain. Only the lowest set bit is exact (see jsonscan's special8, of
// which this is a copy: the scanner does not export its own).
func special8(x uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	q := x ^ (lo * '"')
	b := x ^ (lo * '\\')
	return ((q - lo) | (b - lo) | (x - lo*0x20) | x) & hi
}

// Uint matches a whole number written 0 or [1-9][0-9]*, followed by
// neither a fraction nor an exponent, and returns its digits.
func (c *Compact) Uint() []byte {
	d, i := c.d, c.i
	j := i
	for j < len(d) && '0' <= d[j] && d[j] <= '9' {
		j++
	}
	if !c.ok || j == i || d[i] == '0' && j > i+1 || j < len(d) && (d[j] == '.' || d[j]|0x20 == 'e') {
		c.ok = false
		return nil
	}
	c.i = j
	return d[i:j]
}

// Commit moves the scanner past what the cursor matched and reports
// whether it did; a failed cursor leaves the scanner where it was.
func (c *Compact) Commit(s *jsonscan.Scanner) bool {
	if c.ok {
		s.Skip(c.i - s.Pos())
	}
	return c.ok
}
