package jsonrecord

import (
	"strings"
	"testing"

	"github.com/txsink/txsink/format/internal/jsonscan"
)

// TestCompactStringWords checks Compact.String's eight-bytes-at-a-time
// scan against the scanner: each byte value at each place of strings
// shorter and longer than a word, and at a word's edges, either is read
// as the scanner reads it (a string whose value is its bytes) or fails
// the cursor, when the scanner reads an escape, refuses the string or
// the string is not plain.
func TestCompactStringWords(t *testing.T) {
	for n := 0; n <= 20; n++ {
		for at := 0; at < n; at++ {
			for b := 0; b < 256; b++ {
				body := []byte(strings.Repeat("a", n))
				body[at] = byte(b)
				in := append(append([]byte(`"`), body...), `","x":1}`...)
				c := At(ptr(jsonscan.New(in)))
				got := c.String()
				plain := b >= 0x20 && b < 0x80 && b != '"' && b != '\\'
				if c.OK() != plain && b != '"' {
					t.Fatalf("%q: ok %v, want %v", in, c.OK(), plain)
				}
				if !c.OK() {
					continue
				}
				s := jsonscan.New(in)
				tok, err := s.Value()
				if err != nil || tok.Kind != jsonscan.String || string(s.Bytes(tok)) != string(got) {
					t.Fatalf("%q: cursor read %q, scanner %q (%v)", in, got, s.Bytes(tok), err)
				}
				if b == '"' && string(got) != string(body[:at]) {
					t.Fatalf("%q: cursor read %q, want %q", in, got, body[:at])
				}
			}
		}
	}
}

// TestCompactStringEnd checks that a string the input ends in, at each
// length, is read whole, and an unterminated one at each length fails.
func TestCompactStringEnd(t *testing.T) {
	for n := 0; n <= 20; n++ {
		body := strings.Repeat("b", n)
		c := At(ptr(jsonscan.New([]byte(`"` + body + `"`))))
		if got := c.String(); !c.OK() || string(got) != body {
			t.Errorf("%d bytes: got %q, ok %v", n, got, c.OK())
		}
		c = At(ptr(jsonscan.New([]byte(`"` + body))))
		if got := c.String(); c.OK() || got != nil {
			t.Errorf("%d bytes unterminated: got %q, ok %v", n, got, c.OK())
		}
	}
}

func ptr[T any](v T) *T { return &v }
