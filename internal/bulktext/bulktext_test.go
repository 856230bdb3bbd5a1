package bulktext

import "testing"

func TestAppendEscaped(t *testing.T) {
	for _, tc := range []struct {
		in   string
		nul  bool
		want string
	}{
		{"", false, ""},
		{"plain", false, "plain"},
		{"a\tb\nc\rd\\e", false, `a\tb\nc\rd\\e`},
		{"日本\t語", false, "日本\\t語"},
		{"a\x00b", false, "a\x00b"},
		{"a\x00b", true, `a\0b`},
		{"\\\\", true, `\\\\`},
		{"\xff\t", false, "\xff\\t"},
	} {
		if got := string(AppendEscaped([]byte(">"), tc.in, tc.nul)); got != ">"+tc.want {
			t.Errorf("AppendEscaped(%q, nul %v) = %q, want %q", tc.in, tc.nul, got, ">"+tc.want)
		}
		if got := string(AppendEscaped(nil, []byte(tc.in), tc.nul)); got != tc.want {
			t.Errorf("AppendEscaped([]byte %q, nul %v) = %q, want %q", tc.in, tc.nul, got, tc.want)
		}
	}
}

func TestAppendDateAndClock(t *testing.T) {
	for _, tc := range []struct {
		y, mo, d, h, mi, s, ns int
		want                   string
	}{
		{1, 1, 1, 0, 0, 0, 0, "0001-01-01 00:00:00"},
		{9999, 12, 31, 23, 59, 59, 999999999, "9999-12-31 23:59:59.999999999"},
		{2026, 11, 30, 4, 5, 6, 120000000, "2026-11-30 04:05:06.12"},
		{2026, 2, 3, 14, 0, 9, 1000, "2026-02-03 14:00:09.000001"},
	} {
		b := AppendDate(nil, tc.y, tc.mo, tc.d)
		b = AppendClock(append(b, ' '), tc.h, tc.mi, tc.s, tc.ns)
		if string(b) != tc.want {
			t.Errorf("AppendDate+AppendClock(%v) = %q, want %q", tc, b, tc.want)
		}
	}
}

// TestUnescape reads back what AppendEscaped wrote without nul, and reads
// a backslash before any other byte as that byte.
func TestUnescape(t *testing.T) {
	for _, in := range []string{"", "plain", "a\tb\nc\rd\\e", "日本\t語", "a\x00b", `\\`, "\xff\t", "end\\"} {
		if got := Unescape(string(AppendEscaped(nil, in, false))); got != in {
			t.Errorf("Unescape(AppendEscaped(%q)) = %q", in, got)
		}
	}
	for in, want := range map[string]string{`a\0b`: "a0b", `\N`: "N", `x\`: `x\`, `\\t`: `\t`} {
		if got := Unescape(in); got != want {
			t.Errorf("Unescape(%q) = %q, want %q", in, got, want)
		}
	}
}
