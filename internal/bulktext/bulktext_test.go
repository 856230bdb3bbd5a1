package bulktext

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
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

// TestAppendDateTime compares AppendDateTime with the time package's
// formatting of the same instant in UTC, for the edges of years 1 to
// 9999, leap days, and random instants in any zone with and without
// fractional seconds (whole milliseconds and microseconds too, whose
// trailing zeros are cut), by each Clock.
func TestAppendDateTime(t *testing.T) {
	const layout = "2006-01-02 15:04:05.999999999"
	times := []time.Time{
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(2026, 11, 30, 4, 5, 6, 120000000, time.UTC),
		time.Date(2026, 2, 3, 14, 0, 9, 1000, time.UTC),
		time.Date(2000, 2, 29, 0, 0, 0, 0, time.UTC),
		time.Date(1900, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(999, 12, 31, 23, 59, 59, 500000000, time.UTC),
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(2026, 1, 2, 0, 30, 0, 0, time.FixedZone("x", 3600)),
		{},
	}
	first := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	last := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	r := rand.New(rand.NewPCG(5, 6))
	for range 50000 {
		sec := first + r.Int64N(last-first)
		if r.IntN(4) == 0 {
			sec -= sec % 86400 // midnight UTC
		}
		ns := []int64{0, r.Int64N(1e9), r.Int64N(1000) * 1e6, r.Int64N(1e6) * 1e3}[r.IntN(4)]
		times = append(times, time.Unix(sec, ns).In(time.FixedZone("z", r.IntN(48*1800)-24*1800)))
	}
	// Neighbours on one day, as a group's rows often are: DateTimes'
	// remembered date serves them.
	for i := range 2000 {
		times = append(times, times[len(times)-1-i%7].Add(time.Duration(r.Int64N(3600e9))))
	}
	var w DateTimes
	for _, tm := range times {
		u := tm.UTC()
		full := u.Format(layout)
		unlessMidnight := full
		if u.Hour() == 0 && u.Minute() == 0 && u.Second() == 0 && u.Nanosecond() == 0 {
			unlessMidnight = u.Format("2006-01-02")
		}
		for c, want := range map[Clock]string{DateOnly: u.Format("2006-01-02"), WithClock: full, ClockUnlessMidnight: unlessMidnight} {
			got, ok := AppendDateTime([]byte(">"), tm, c)
			if !ok || string(got) != ">"+want {
				t.Fatalf("AppendDateTime(%v, %d) = %q, %v; want %q", tm, c, got, ok, ">"+want)
			}
			if got, ok := w.Append(nil, tm, c); !ok || string(got) != want {
				t.Fatalf("DateTimes.Append(%v, %d) after %q = %q, %v; want %q", tm, c, w.date, got, ok, want)
			}
		}
	}
	// Years the servers do not read in four digits are refused, the
	// buffer left as it was.
	for _, tm := range []time.Time{
		time.Date(0, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-44, 3, 15, 12, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("x", -3600)),
		time.Date(1, 1, 1, 0, 30, 0, 0, time.FixedZone("x", 3600)),
	} {
		if got, ok := AppendDateTime([]byte(">"), tm, WithClock); ok || string(got) != ">" {
			t.Errorf("AppendDateTime(%v) = %q, %v; want it refused", tm, got, ok)
		}
	}
}

// TestAppendInt compares AppendInt and AppendUint with strconv's, for the
// powers of ten and their neighbours (where the digit count changes), the
// extremes, and random values of every bit length.
func TestAppendInt(t *testing.T) {
	vals := []uint64{0, 1, 9, 10, 11, 99, 100, 101, math.MaxInt64, math.MaxInt64 + 1, math.MaxUint64}
	for p := uint64(10); p < math.MaxUint64/10; p *= 10 {
		vals = append(vals, p-1, p, p+1)
	}
	vals = append(vals, 1e19-1, 1e19, 1e19+1)
	r := rand.New(rand.NewPCG(9, 10))
	for range 100000 {
		vals = append(vals, r.Uint64()>>r.IntN(64))
	}
	for _, u := range vals {
		if got, want := string(AppendUint([]byte(">"), u)), ">"+strconv.FormatUint(u, 10); got != want {
			t.Fatalf("AppendUint(%d) = %q, want %q", u, got, want)
		}
		for _, v := range []int64{int64(u), -int64(u)} {
			if got, want := string(AppendInt([]byte(">"), v)), ">"+strconv.FormatInt(v, 10); got != want {
				t.Fatalf("AppendInt(%d) = %q, want %q", v, got, want)
			}
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
