package jsonrecord

import (
	"fmt"
	"testing"

	"github.com/txsink/txsink/format/internal/jsonscan"
)

// TestScanImageNull holds scanObject's null read in place (four bytes
// compared) to the scanner's literal: a null image is no row and leaves the
// scanner just past it, white space before it included; anything else
// that begins with 'n' is refused with the scanner's own error, at the
// same offset.
func TestScanImageNull(t *testing.T) {
	for _, c := range []struct {
		in   string
		ok   bool // read as null
		next int  // the scanner's offset after it, when ok
	}{
		{`null`, true, 4},
		{`null,"after":{}`, true, 4},
		{`null}`, true, 4},
		{" \n\tnull,", true, 7},
		{`nul`, false, 0},
		{`nulL,`, false, 0},
		{`nil,`, false, 0},
		{`n`, false, 0},
		{`Null,`, false, 0},
	} {
		for _, of := range []bool{false, true} {
			s := jsonscan.New([]byte(c.in))
			var rs jsonscan.Rows
			var p jsonscan.Pending
			var ok bool
			var err error
			if of {
				keys := jsonscan.NewKeys("id")
				ok, err = ScanImageOf(&s, &rs, &p, &keys, "before", "hint")
			} else {
				ok, err = ScanImage(&s, &rs, &p, "before", "hint")
			}
			if ok {
				t.Errorf("%q: an image", c.in)
			}
			if c.ok {
				if err != nil || s.Pos() != c.next {
					t.Errorf("%q: %v at %d, want null up to %d", c.in, err, s.Pos(), c.next)
				}
				continue
			}
			w := jsonscan.New([]byte(c.in))
			_, werr := w.Value()
			if werr == nil || fmt.Sprint(err) != fmt.Sprint(werr) {
				t.Errorf("%q: %v, want the scanner's %v", c.in, err, werr)
			}
		}
	}
}
