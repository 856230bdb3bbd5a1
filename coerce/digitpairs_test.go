package coerce

import (
	"testing"

	"github.com/txsink/txsink/schema"
)

// TestDateTimeWords: plainDateTime reads "YYYY-MM-" and "DD HH:MM" as
// words (digitPairs). Every byte of a valid date-time replaced by each of
// the bytes next to the digits and the separators, and by bytes of 0x80
// and up, gives what the general path gives.
func TestDateTimeWords(t *testing.T) {
	const valid = "2026-11-01 09:23:45.120"
	col := timeCol(schema.DateTime, 3)
	for i := 0; i < len(valid); i++ {
		for _, c := range []byte{'/', '0', '9', ':', '-', ' ', 'T', 't', '.', 'a', 0, 0x7f, 0x80, 0xb0, 0xff} {
			b := []byte(valid)
			b[i] = c
			sameAsGeneral(t, toDateTimeAny, col, string(b))
		}
	}
	for _, s := range []string{"9999-12-31 23:59:59", "0001-01-01 00:00:00", "0000-01-01 00:00:00", "2024-02-29 23:59:59", "2023-02-29 00:00:00"} {
		sameAsGeneral(t, toDateTimeAny, col, s)
	}
	for _, digits := range []string{"20261101", "99999999", "00000000", "09182736"} {
		pairs, ok := digitPairs(word(digits), 0)
		for i := 0; ok && i < 7; i++ {
			if got, want := byte(pairs>>(8*i)), 10*(digits[i]-'0')+digits[i+1]-'0'; got != want {
				t.Errorf("digitPairs(%q): pair %d is %d, want %d", digits, i, got, want)
			}
		}
		if !ok {
			t.Errorf("digitPairs(%q) is not ok", digits)
		}
	}
	for _, tc := range []struct {
		text string
		seps uint64
		ok   bool
	}{
		{"2026-11-", 0xff<<32 | 0xff<<56, true},
		{"2026/11-", 0xff<<32 | 0xff<<56, true}, // separators are checked apart
		{"20/6-11-", 0xff<<32 | 0xff<<56, false},
		{"2026-1:-", 0xff<<32 | 0xff<<56, false},
		{"2026-11-", 0, false},
		{"\x80026-11-", 0xff<<32 | 0xff<<56, false},
	} {
		if _, ok := digitPairs(word(tc.text), tc.seps); ok != tc.ok {
			t.Errorf("digitPairs(%q, %#x) ok = %v, want %v", tc.text, tc.seps, ok, tc.ok)
		}
	}
}
