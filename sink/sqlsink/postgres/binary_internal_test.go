package postgres

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestParseDate checks parseDate against the time package for days
// across years 1 to 9999, and refuses what is not a date.
func TestParseDate(t *testing.T) {
	epoch := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	for d := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() < 10000; d = d.AddDate(0, 0, 3) {
		s := d.Format("2006-01-02")
		got, ok := parseDate(s)
		if want := (d.Unix() - epoch.Unix()) / 86400; !ok || got != want {
			t.Fatalf("parseDate(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"0000-01-01", "2023-02-29", "2024-04-31", "2024-13-01", "2024-00-10", "2024-01-00",
		"2024-1-01", "2024-01-01 ", "+024-01-01", "2024/01/01", ""} {
		if _, ok := parseDate(s); ok {
			t.Errorf("parseDate(%q) took it", s)
		}
	}
}

// TestAppendNumeric encodes decimals and reads the binary numeric back:
// the same value with the same number of fractional digits.
func TestAppendNumeric(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	cases := []string{"0", "-0", "0.0", "0.0000", "1", "-1", "10000", "9999", "12345.6789", "0.00005", "-0.05",
		"1234.50", "100000000.00000001", "000123.4500", strings.Repeat("9", 40) + "." + strings.Repeat("1", 33)}
	for range 5000 {
		s := fmt.Sprint(r.Uint64N(1 << uint(r.IntN(63))))
		if r.IntN(2) == 0 {
			k := r.IntN(12) + 1
			s += "." + fmt.Sprintf("%012d", r.Uint64N(1e12))[:k]
		}
		if r.IntN(2) == 0 {
			s = "-" + s
		}
		cases = append(cases, s)
	}
	for _, s := range cases {
		if !plainDecimal(s) {
			t.Fatalf("plainDecimal(%q) refused it", s)
		}
		got := readNumeric(t, appendNumeric(nil, s))
		if want := canonical(s); got != want {
			t.Fatalf("appendNumeric(%q) reads back as %q, want %q", s, got, want)
		}
	}
	for _, s := range []string{"", "-", ".5", "5.", "1e5", "+1", "1.2.3", "NaN", "1,5", " 1", "--1"} {
		if plainDecimal(s) {
			t.Errorf("plainDecimal(%q) took it", s)
		}
	}
}

// readNumeric decodes one binary numeric field (its length first) into
// plain decimal text with dscale fractional digits.
func readNumeric(t *testing.T, b []byte) string {
	t.Helper()
	if int(binary.BigEndian.Uint32(b)) != len(b)-4 {
		t.Fatalf("numeric field length %d for %d bytes", binary.BigEndian.Uint32(b), len(b)-4)
	}
	n := int(binary.BigEndian.Uint16(b[4:]))
	weight := int(int16(binary.BigEndian.Uint16(b[6:])))
	sign := binary.BigEndian.Uint16(b[8:])
	dscale := int(binary.BigEndian.Uint16(b[10:]))
	var digits strings.Builder
	// The digits from 10000^max(weight,0) down to 10000^-(n-weight-1).
	lo := min(weight-n+1, 0)
	for w := max(weight, 0); w >= lo; w-- {
		g := 0
		if i := weight - w; i >= 0 && i < n {
			g = int(binary.BigEndian.Uint16(b[12+2*i:]))
			if g >= 10000 {
				t.Fatalf("digit %d out of range", g)
			}
		}
		fmt.Fprintf(&digits, "%04d", g)
	}
	d := digits.String()
	point := len(d) + 4*lo // the digits before the decimal point
	intPart := strings.TrimLeft(d[:point], "0")
	if intPart == "" {
		intPart = "0"
	}
	frac := d[point:] + strings.Repeat("0", dscale)
	s := intPart
	if dscale > 0 {
		if strings.TrimRight(frac[dscale:], "0") != "" {
			t.Fatalf("digits beyond the scale %d: %s", dscale, frac)
		}
		s += "." + frac[:dscale]
	}
	if sign == 0x4000 {
		s = "-" + s
	}
	return s
}

// canonical is s without leading zeros, and without the minus of a zero.
func canonical(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	intPart = strings.TrimLeft(intPart, "0")
	if intPart == "" {
		intPart = "0"
	}
	if frac != "" {
		intPart += "." + frac
	}
	if neg && strings.Trim(s, "0.") != "" {
		return "-" + intPart
	}
	return intPart
}

// TestParseTimeAndUUID checks the forms parseTime and parseUUID take and
// the ones they leave to the text path.
func TestParseTimeAndUUID(t *testing.T) {
	times := []struct {
		s  string
		us int64
		ok bool
	}{
		{"00:00:00", 0, true}, {"12:34:56", (12*3600 + 34*60 + 56) * 1e6, true}, {"23:59:59.999999", 86400e6 - 1, true},
		{"24:00:00", 86400e6, true}, {"01:02:03.5", 3723e6 + 5e5, true}, {"01:02:03.000001", 3723e6 + 1, true},
		{"24:00:00.000001", 0, false}, {"-01:00:00", 0, false}, {"100:00:00", 0, false}, {"12:60:00", 0, false},
		{"12:00:60", 0, false}, {"12:00:00.1234567", 0, false}, {"12:00:00.", 0, false}, {"1:00:00", 0, false},
	}
	for _, tc := range times {
		us, ok := parseTime(tc.s)
		if ok != tc.ok || (ok && us != tc.us) {
			t.Errorf("parseTime(%q) = %d, %v; want %d, %v", tc.s, us, ok, tc.us, tc.ok)
		}
	}
	uuids := []struct {
		s  string
		ok bool
	}{
		{"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", true}, {"A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", true},
		{"a0eebc999c0b4ef8bb6d6bb9bd380a11", true}, {"{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}", false},
		{"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1g", false}, {"a0eebc99-9c0b4-ef8-bb6d-6bb9bd380a11", false}, {"", false},
	}
	for _, tc := range uuids {
		u, ok := parseUUID(tc.s)
		if ok != tc.ok {
			t.Errorf("parseUUID(%q) ok = %v, want %v", tc.s, ok, tc.ok)
		}
		if ok && fmt.Sprintf("%x", u) != strings.ToLower(strings.ReplaceAll(tc.s, "-", "")) {
			t.Errorf("parseUUID(%q) = %x", tc.s, u)
		}
	}
}
