package jsonrecord

import "testing"

// TestScan checks the steps of a caller that keeps its own offset:
// ScanString, ScanUint (each with and without null), QuotedEnd and
// Key16.End, and that -1 (an earlier step failed) matches nothing.
func TestScan(t *testing.T) {
	type scan func(d []byte, i int) (int, []byte)
	str := func(null bool) scan { return func(d []byte, i int) (int, []byte) { return ScanString(d, i, null) } }
	num := func(null bool) scan { return func(d []byte, i int) (int, []byte) { return ScanUint(d, i, null) } }
	quoted := func(d []byte, i int) (int, []byte) { return QuotedEnd(d, i), nil }
	key := NewKey16(`,"server_id":`)
	short := NewKey16(`,"db":`)
	keyEnd := func(k *Key16) scan { return func(d []byte, i int) (int, []byte) { return k.End(d, i), nil } }
	for _, tc := range []struct {
		in   string
		at   int
		scan scan
		end  int
		val  string
	}{
		{`"abc",`, 0, str(false), 5, "abc"},
		{`null,`, 0, str(false), -1, ""},
		{`null,`, 0, str(true), 4, ""},
		{`nul`, 0, str(true), -1, ""},
		{`nulL,`, 0, str(true), -1, ""},
		{`x"abc",`, 1, str(false), 6, "abc"},
		{`"abc",`, -1, str(true), -1, ""},
		{`"abc",`, 6, str(true), -1, ""},
		{`12,`, 0, num(false), 2, "12"},
		{`null,`, 0, num(false), -1, ""},
		{`null,`, 0, num(true), 4, ""},
		{`nullx`, 0, num(true), 4, ""}, // what follows is the next step's
		{`0,`, 0, num(true), 1, "0"},
		{`01,`, 0, num(true), -1, ""},
		{`123456789012345678,`, 0, num(false), 18, "123456789012345678"},
		{`12345678.5,`, 0, num(false), -1, ""},
		{`12345678e5,`, 0, num(false), -1, ""},
		{`1`, 0, num(false), 1, "1"},
		{`1`, -1, num(true), -1, ""},
		{`"a\"b",`, 0, quoted, 6, ""},
		{`"[\"1\",\"2\"]",`, 0, quoted, 15, ""},
		{`"a\nb",`, 0, quoted, -1, ""},
		{`"a\\",`, 0, quoted, -1, ""},
		{`"a\"`, 0, quoted, -1, ""},
		{`"a\`, 0, quoted, -1, ""},
		{"\"a\x01\",", 0, quoted, -1, ""},
		{`"a",`, -1, quoted, -1, ""},
		{`,"server_id":1,"gtid":null}`, 0, keyEnd(&key), 13, ""},
		{`,"server_ix":1,"gtid":null}`, 0, keyEnd(&key), -1, ""},
		{`,"server_id":1}`, 0, keyEnd(&key), -1, ""}, // fewer than 16 bytes
		{`,"db":"shop","sequence":null`, 0, keyEnd(&short), 6, ""},
		{`,"dc":"shop","sequence":null`, 0, keyEnd(&short), -1, ""},
		{`,"db":"shop","sequence":null`, -1, keyEnd(&short), -1, ""},
	} {
		end, val := tc.scan([]byte(tc.in), tc.at)
		if end != tc.end || string(val) != tc.val {
			t.Errorf("%q at %d: got %d %q, want %d %q", tc.in, tc.at, end, val, tc.end, tc.val)
		}
	}
}
