package jsonrecord

import (
	"strings"
	"testing"

	"github.com/txsink/txsink/format/internal/jsonscan"
)

// TestScanStringWords checks ScanString's eight-bytes-at-a-time
// scan against the scanner: each byte value at each place of strings
// shorter and longer than a word, and at a word's edges, either is read
// as the scanner reads it (a string whose value is its bytes) or fails
// the step, when the scanner reads an escape, refuses the string or
// the string is not plain.
func TestScanStringWords(t *testing.T) {
	for n := 0; n <= 20; n++ {
		for at := 0; at < n; at++ {
			for b := 0; b < 256; b++ {
				body := []byte(strings.Repeat("a", n))
				body[at] = byte(b)
				in := append(append([]byte(`"`), body...), `","x":1}`...)
				j, got := ScanString(in, 0, false)
				ok := j >= 0
				plain := b >= 0x20 && b < 0x80 && b != '"' && b != '\\'
				if ok != plain && b != '"' {
					t.Fatalf("%q: ok %v, want %v", in, ok, plain)
				}
				if !ok {
					continue
				}
				s := jsonscan.New(in)
				tok, err := s.Value()
				if err != nil || tok.Kind != jsonscan.String || string(s.Bytes(tok)) != string(got) {
					t.Fatalf("%q: ScanString read %q, scanner %q (%v)", in, got, s.Bytes(tok), err)
				}
				if b == '"' && string(got) != string(body[:at]) {
					t.Fatalf("%q: ScanString read %q, want %q", in, got, body[:at])
				}
			}
		}
	}
}

// TestScanStringEnd checks that a string the input ends in, at each
// length, is read whole, and an unterminated one at each length fails.
func TestScanStringEnd(t *testing.T) {
	for n := 0; n <= 20; n++ {
		body := strings.Repeat("b", n)
		if j, got := ScanString([]byte(`"`+body+`"`), 0, false); j < 0 || string(got) != body {
			t.Errorf("%d bytes: got %q, end %d", n, got, j)
		}
		if j, got := ScanString([]byte(`"`+body), 0, false); j >= 0 || got != nil {
			t.Errorf("%d bytes unterminated: got %q, end %d", n, got, j)
		}
	}
}
