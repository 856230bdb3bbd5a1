package jsonscan

import (
	"fmt"
	"strings"
	"testing"
)

// TestScanMembersNumbers holds scanMembers' numbers read a word at a time
// (up to 7 digits, a point and up to 7 more) and the ones it leaves to
// numberEnd (a sign, a leading 0, 8 digits or more, an exponent, a point
// with no digit, the input's end within 16 bytes) to the general way
// (checkScanRow: the same members, row, error and offset), as the only
// member, among others, and last, with and without bytes after the object.
func TestScanMembersNumbers(t *testing.T) {
	numbers := []string{
		"1", "7", "12", "1234567", "12345678", "123456789012",
		"1.5", "9.99", "1.1234567", "1.12345678", "1234567.1234567", "12345678.1",
		"0", "0.5", "-1", "-0.25", "-0", "1e5", "1E+5", "1.5e-3", "1.e5",
		"1.", "1.x", "01", "1.2.3", "1e", "1-", "1x", "1 ", "1]", "-", "-x",
	}
	for _, num := range numbers {
		for _, shape := range []string{`{"a":%s}`, `{"a":%s,"b":"x"}`, `{"a":"x","b":%s}`, `{"a":1,"b":%s,"c":true}`} {
			row := fmt.Sprintf(shape, num)
			for _, after := range []string{"", `,"source":{"db":"shop"}}`, strings.Repeat(" ", 20)} {
				checkScanRow(t, []byte(row+after))
			}
		}
	}
	// Every number above, as its row's numberEnd reads it: the member's
	// text is the number's whole text per the grammar.
	for _, num := range numbers {
		in := []byte(`{"a":` + num + `,"b":1}` + strings.Repeat(" ", 20))
		var rs Rows
		var p Pending
		s := New(in)
		if err := s.ScanRow(&rs, &p); err != nil {
			continue
		}
		m := rs.members(&p)[0]
		if end := numberEnd(in, 5); int(m.vEnd)+p.start != end {
			t.Errorf("%s: number up to %d, numberEnd %d", num, int(m.vEnd)+p.start, end)
		}
	}
}
