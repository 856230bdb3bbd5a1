package jsonrecord

import (
	"testing"

	"github.com/txsink/txsink/format/internal/jsonscan"
)

// TestCompact checks that a cursor takes only text the scanner reads with
// the same meaning, and leaves the rest to it.
func TestCompact(t *testing.T) {
	for _, tc := range []struct {
		in   string
		read func(c *Compact) []byte
		want string // what read returns, "" for a failed cursor
		ok   bool
	}{
		{`"abc",`, (*Compact).String, "abc", true},
		{`"",`, (*Compact).String, "", true},
		{`"a b~",`, (*Compact).String, "a b~", true},
		{`"a\"b",`, (*Compact).String, "", false},
		{`"a\u0041",`, (*Compact).String, "", false},
		{"\"a\tb\",", (*Compact).String, "", false},
		{"\"caf\xc3\xa9\",", (*Compact).String, "", false},
		{"\"a\x7f\",", (*Compact).String, "a\x7f", true}, // DEL is plain to the scanner too
		{`"a longer plain string, past 8 bytes",`, (*Compact).String, "a longer plain string, past 8 bytes", true},
		{`"a longer string with an \u0041 escape",`, (*Compact).String, "", false},
		{"\"a longer string, then caf\xc3\xa9\",", (*Compact).String, "", false},
		{`"a longer string never closed,,,,,,,,`, (*Compact).String, "", false},
		{`"abc`, (*Compact).String, "", false},
		{` "abc"`, (*Compact).String, "", false},
		{`abc"`, (*Compact).String, "", false},
		{`0,`, (*Compact).Uint, "0", true},
		{`7}`, (*Compact).Uint, "7", true},
		{`1234567890123,`, (*Compact).Uint, "1234567890123", true},
		{`42`, (*Compact).Uint, "42", true},
		{`01,`, (*Compact).Uint, "", false},
		{`-1,`, (*Compact).Uint, "", false},
		{`1.5,`, (*Compact).Uint, "", false},
		{`1e3,`, (*Compact).Uint, "", false},
		{`1E3,`, (*Compact).Uint, "", false},
		{`"1",`, (*Compact).Uint, "", false},
		{`,`, (*Compact).Uint, "", false},
		{``, (*Compact).Uint, "", false},
	} {
		s := jsonscan.New([]byte(tc.in))
		c := At(&s)
		got := tc.read(&c)
		if c.OK() != tc.ok || string(got) != tc.want {
			t.Errorf("%q: got %q, ok %v; want %q, ok %v", tc.in, got, c.OK(), tc.want, tc.ok)
		}
	}
}

// TestCompactCommit checks that a cursor moves the scanner only when
// every step matched, and that a failed step fails the later ones.
func TestCompactCommit(t *testing.T) {
	for _, tc := range []struct {
		in  string
		ok  bool
		pos int
	}{
		{`{"id":"t1","n":1}x`, true, 17},
		{`{"id":"t1", "n":1}x`, false, 0},
		{`{"id":"t\n1","n":1}x`, false, 0},
		{`{"id":"t1","n":1.0}x`, false, 0},
		{`{"id":"t1","n":1`, false, 0},
	} {
		s := jsonscan.New([]byte(tc.in))
		c := At(&s)
		c.Lit(`{"id":`)
		c.String()
		c.Lit(`,"n":`)
		c.Uint()
		c.Lit(`}`)
		if ok := c.Commit(&s); ok != tc.ok || s.Pos() != tc.pos {
			t.Errorf("%q: ok %v at %d, want %v at %d", tc.in, ok, s.Pos(), tc.ok, tc.pos)
		}
	}
}

// FuzzCompact: what a cursor takes, the scanner reads as the same value
// ending at the same place.
func FuzzCompact(f *testing.F) {
	for _, seed := range []string{`"abc",`, `"a\"b"`, "\"caf\xc3\xa9\"", `0,`, `01`, `12.5`, `7e1`, `"`, `-3`, `null`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, read := range []func(*Compact) []byte{(*Compact).String, (*Compact).Uint} {
			s := jsonscan.New(data)
			c := At(&s)
			got := read(&c)
			if !c.OK() {
				continue
			}
			want := jsonscan.New(data)
			tok, err := want.Value()
			if err != nil {
				t.Fatalf("%q: the cursor took %q, the scanner refused it: %v", data, got, err)
			}
			if text := want.Text(tok); text != string(got) || tok.Kind != jsonscan.String && tok.Kind != jsonscan.Number {
				t.Fatalf("%q: the cursor took %q, the scanner read %q (%v)", data, got, text, tok.Kind)
			}
			if c.Commit(&s); s.Pos() != want.Pos() {
				t.Fatalf("%q: the cursor ends at %d, the scanner at %d", data, s.Pos(), want.Pos())
			}
		}
	})
}
