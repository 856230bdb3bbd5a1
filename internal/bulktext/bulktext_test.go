package bulktext

import (
	"math/rand/v2"
	"strings"
	"testing"
)

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

// escapedRef is AppendEscaped as it was before plain's scan: byte by
// byte, the reference the scan must not change a byte of.
func escapedRef(s string, nul bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == 0 && nul:
			b.WriteString(`\0`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// TestAppendEscapedScan puts each byte value at each position of values
// of every length up to 40 (every path of plain: bytes, half words, whole
// and overlapping words), alone and beside a second one, and compares with
// escapedRef.
func TestAppendEscapedScan(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := 0; n <= 40; n++ {
		base := make([]byte, n)
		for i := range base {
			base[i] = "abcXYZ09 ~\x7f\x80\xe9\xff"[r.IntN(14)]
		}
		check := func(s []byte) {
			for _, nul := range []bool{false, true} {
				want := escapedRef(string(s), nul)
				if got := string(AppendEscaped([]byte("<"), string(s), nul)); got != "<"+want {
					t.Fatalf("AppendEscaped(%q, nul %v) = %q, want %q", s, nul, got, "<"+want)
				}
				if got := string(AppendEscaped(nil, s, nul)); got != want {
					t.Fatalf("AppendEscaped([]byte %q, nul %v) = %q, want %q", s, nul, got, want)
				}
			}
		}
		check(base)
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				s := append([]byte(nil), base...)
				s[pos] = byte(c)
				check(s)
				s[r.IntN(n)] = []byte("\\\t\n\r\x00\x01\x1f ![]")[r.IntN(11)]
				check(s)
			}
		}
	}
}

// FuzzAppendEscaped compares AppendEscaped with escapedRef on any bytes.
func FuzzAppendEscaped(f *testing.F) {
	for _, s := range []string{"", "plain", "a\tb\nc\rd\\e", "nul\x00byte", "0123456789abcdef\\", "\x1f\x20\x5b\x5c\x5d"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, nul bool) {
		if got, want := string(AppendEscaped(nil, s, nul)), escapedRef(s, nul); got != want {
			t.Fatalf("AppendEscaped(%q, nul %v) = %q, want %q", s, nul, got, want)
		}
	})
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
