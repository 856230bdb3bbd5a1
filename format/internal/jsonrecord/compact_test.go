package jsonrecord

import (
	"testing"

	"github.com/txsink/txsink/format/internal/jsonscan"
)

// scanFunc is ScanString's or ScanUint's signature, for the tables.
type scanFunc = func(d []byte, i int, null bool) (int, []byte)

// TestScanPlain checks that ScanString and ScanUint take only text the
// scanner reads with the same meaning, and leave the rest to it.
func TestScanPlain(t *testing.T) {
	for _, tc := range []struct {
		in   string
		read scanFunc
		want string // what read returns, "" for a failed step
		ok   bool
	}{
		{`"abc",`, ScanString, "abc", true},
		{`"",`, ScanString, "", true},
		{`"a b~",`, ScanString, "a b~", true},
		{`"a\"b",`, ScanString, "", false},
		{`"a\u0041",`, ScanString, "", false},
		{"\"a\tb\",", ScanString, "", false},
		{"\"caf\xc3\xa9\",", ScanString, "", false},
		{"\"a\x7f\",", ScanString, "a\x7f", true}, // DEL is plain to the scanner too
		{`"a longer plain string, past 8 bytes",`, ScanString, "a longer plain string, past 8 bytes", true},
		{`"a longer string with an \u0041 escape",`, ScanString, "", false},
		{"\"a longer string, then caf\xc3\xa9\",", ScanString, "", false},
		{`"a longer string never closed,,,,,,,,`, ScanString, "", false},
		{`"abc`, ScanString, "", false},
		{` "abc"`, ScanString, "", false},
		{`abc"`, ScanString, "", false},
		{`0,`, ScanUint, "0", true},
		{`7}`, ScanUint, "7", true},
		{`1234567890123,`, ScanUint, "1234567890123", true},
		{`42`, ScanUint, "42", true},
		{`01,`, ScanUint, "", false},
		{`-1,`, ScanUint, "", false},
		{`1.5,`, ScanUint, "", false},
		{`1e3,`, ScanUint, "", false},
		{`1E3,`, ScanUint, "", false},
		{`"1",`, ScanUint, "", false},
		{`,`, ScanUint, "", false},
		{``, ScanUint, "", false},
	} {
		j, got := tc.read([]byte(tc.in), 0, false)
		if ok := j >= 0; ok != tc.ok || string(got) != tc.want {
			t.Errorf("%q: got %q, ok %v; want %q, ok %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestScanChain checks that a chain of steps ends where the text it
// matched ends, and that a failed step fails the later ones (-1 matches
// nothing), so the caller reads the text the general way from its start.
func TestScanChain(t *testing.T) {
	lit := func(d []byte, i int, l string) int {
		if i < 0 || len(d)-i < len(l) || string(d[i:i+len(l)]) != l {
			return -1
		}
		return i + len(l)
	}
	for _, tc := range []struct {
		in  string
		ok  bool
		end int
	}{
		{`{"id":"t1","n":1}x`, true, 17},
		{`{"id":"t1", "n":1}x`, false, -1},
		{`{"id":"t\n1","n":1}x`, false, -1},
		{`{"id":"t1","n":1.0}x`, false, -1},
		{`{"id":"t1","n":1`, false, -1},
	} {
		d := []byte(tc.in)
		i := lit(d, 0, `{"id":`)
		i, _ = ScanString(d, i, false)
		i = lit(d, i, `,"n":`)
		i, _ = ScanUint(d, i, false)
		i = lit(d, i, `}`)
		if ok := i >= 0; ok != tc.ok || i != tc.end {
			t.Errorf("%q: ok %v at %d, want %v at %d", tc.in, ok, i, tc.ok, tc.end)
		}
	}
}

// FuzzScanPlain: what ScanString or ScanUint takes, the scanner reads as
// the same value ending at the same place.
func FuzzScanPlain(f *testing.F) {
	for _, seed := range []string{`"abc",`, `"a\"b"`, "\"caf\xc3\xa9\"", `0,`, `01`, `12.5`, `7e1`, `"`, `-3`, `null`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, read := range []scanFunc{ScanString, ScanUint} {
			end, got := read(data, 0, false)
			if end < 0 {
				continue
			}
			want := jsonscan.New(data)
			tok, err := want.Value()
			if err != nil {
				t.Fatalf("%q: the step took %q, the scanner refused it: %v", data, got, err)
			}
			if text := want.Text(tok); text != string(got) || tok.Kind != jsonscan.String && tok.Kind != jsonscan.Number {
				t.Fatalf("%q: the step took %q, the scanner read %q (%v)", data, got, text, tok.Kind)
			}
			if end != want.Pos() {
				t.Fatalf("%q: the step ends at %d, the scanner at %d", data, end, want.Pos())
			}
		}
	})
}
