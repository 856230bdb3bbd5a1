package coerce

import (
	"errors"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/schema"
)

// decimalSyntax is the grammar parseDecimal accepts (finite numbers only).
var decimalSyntax = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE]([+-]?[0-9]+))?$`)

// canonicalSyntax is the form Decimal results take.
var canonicalSyntax = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?$`)

// pow10 returns 10^n as a rational, for any sign of n.
func pow10(n int) *big.Rat {
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(n))), nil)
	r := new(big.Rat).SetInt(p)
	if n < 0 {
		r.Inv(r)
	}
	return r
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func FuzzDecimal(f *testing.F) {
	for _, s := range []string{
		"0", "-0", "0.000", "12.345", "-0.05", "1e-3", "5e2", "1.5E+2", ".5", "5.", "+1.5",
		"12345678901234567890.1234567890", "NaN", "-Infinity", "1e1000000000", "0e-999",
		"00012.3400", "1e-20", "9.99e2", "-", "", "1.2.3", "1e+", "１２",
	} {
		for _, ps := range [][2]int{{10, 2}, {10, 3}, {65, 30}, {38, 0}, {0, 0}, {3, 5}, {2, -3}} {
			f.Add(s, uint8(ps[0]), int8(ps[1]))
		}
	}
	f.Fuzz(func(t *testing.T, s string, p uint8, sc int8) {
		col := schema.Column{Name: "d", Class: schema.Decimal, Precision: int(p), Scale: int(sc)}
		got, err := Value(&col, num(s))
		m := decimalSyntax.FindStringSubmatch(s)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Reason == "" {
				t.Fatalf("Value(%q) error %v is not an *Error with a reason", s, err)
			}
		} else {
			out, ok := got.(string)
			if !ok {
				t.Fatalf("Value(%q) = %T, want string", s, got)
			}
			if m == nil {
				t.Fatalf("Value(%q) accepted text outside the decimal grammar: %q", s, out)
			}
			if strings.ContainsAny(out, "eE+") {
				t.Fatalf("Value(%q) = %q has an exponent or a plus sign", s, out)
			}
			if !canonicalSyntax.MatchString(out) || out == "-0" || strings.HasPrefix(out, "-0.") && strings.Trim(out[3:], "0") == "" {
				t.Fatalf("Value(%q) = %q is not canonical", s, out)
			}
			again, err := Value(&col, out)
			if err != nil || again != out {
				t.Fatalf("Value(%q) = %q, but re-reading it gives %v, %v", s, out, again, err)
			}
			if p > 0 {
				intPart, frac, _ := strings.Cut(strings.TrimPrefix(out, "-"), ".")
				if sc >= 0 && len(frac) > int(sc) {
					t.Fatalf("Value(%q) = %q keeps more than %d fractional digits", s, out, sc)
				}
				if intPart != "0" && len(intPart) > int(p)-int(sc) {
					t.Fatalf("Value(%q) = %q has more than %d integer digits", s, out, int(p)-int(sc))
				}
			}
		}
		// Compare with exact rational arithmetic when the numbers stay small.
		if m == nil || len(s) > 300 {
			return
		}
		if m[3] != "" {
			e, err := strconv.Atoi(m[3])
			if err != nil || abs(e) > 400 {
				return
			}
		}
		in, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("big.Rat cannot read %q", s)
		}
		if err == nil {
			out, _ := new(big.Rat).SetString(got.(string))
			if out.Cmp(in) != 0 {
				t.Fatalf("Value(%q) = %q changes the value", s, got)
			}
		}
		if p == 0 {
			return
		}
		// A value fits when scaling it by 10^scale gives an integer below
		// 10^precision in magnitude.
		scaled := new(big.Rat).Mul(in, pow10(int(sc)))
		fits := scaled.IsInt() && new(big.Rat).Abs(scaled).Cmp(pow10(int(p))) < 0
		if fits != (err == nil) {
			t.Fatalf("Value(%q) into DECIMAL(%d,%d): fits=%v but err=%v", s, p, sc, fits, err)
		}
	})
}

func FuzzDateTime(f *testing.F) {
	for _, s := range []string{
		"2020-05-13 07:40:06", "2020-05-13T07:40:06.123456Z", "2020-05-13T07:40:06+02:00",
		"2020-05-13T07:40:06-0700", "2020-05-13T07:40:06+07", "0001-01-01 00:00:00",
		"9999-12-31 23:59:59.999999999", "2024-02-29", "0000-00-00 00:00:00", "2020-05-13 24:00:00",
		"2020-05-13t07:40:06.5z", "0001-01-01 00:30:00+01:00", "2020-05-13 07:40:06.1234567890",
	} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(6))
		f.Add(s, uint8(9))
	}
	layouts := []string{
		"2006-01-02T15:04:05Z07:00", "2006-01-02 15:04:05Z07:00",
		"2006-01-02T15:04:05-0700", "2006-01-02 15:04:05-0700",
		"2006-01-02T15:04:05-07", "2006-01-02 15:04:05-07",
		"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02",
	}
	f.Fuzz(func(t *testing.T, s string, fd uint8) {
		col := timeCol(schema.DateTime, int(fd%10))
		got, err := Value(&col, s)
		ts := timeCol(schema.Timestamp, int(fd%10))
		got2, err2 := Value(&ts, s)
		if (err == nil) != (err2 == nil) || err == nil && !got.(time.Time).Equal(got2.(time.Time)) {
			t.Fatalf("%q: DateTime gives %v, %v but Timestamp %v, %v", s, got, err, got2, err2)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Reason == "" {
				t.Fatalf("Value(%q) error %v is not an *Error with a reason", s, err)
			}
			return
		}
		tm := got.(time.Time)
		if tm.Location() != time.UTC {
			t.Fatalf("Value(%q) = %v is not in UTC", s, tm)
		}
		if y := tm.Year(); y < 1 || y > 9999 {
			t.Fatalf("Value(%q) = %v is outside years 1..9999", s, tm)
		}
		if n := nanoDigits(tm.Nanosecond()); n > col.FracDigits {
			t.Fatalf("Value(%q) = %v keeps %d fractional digits, the column %d", s, tm, n, col.FracDigits)
		}
		// The result, written back out, reads as itself.
		back, err := Value(&col, tm.Format("2006-01-02 15:04:05.999999999"))
		if err != nil || !back.(time.Time).Equal(tm) {
			t.Fatalf("Value(%q) = %v, but re-reading it gives %v, %v", s, tm, back, err)
		}
		// Go's own parser agrees wherever it reads the text too.
		for _, l := range layouts {
			if want, err := time.Parse(l, s); err == nil && !want.Equal(tm) {
				t.Fatalf("Value(%q) = %v, time.Parse(%q) = %v", s, tm, l, want)
			}
		}
	})
}

func FuzzTime(f *testing.F) {
	for _, s := range []string{"12:34:56", "-838:59:59", "838:59:59.000000", "1:02:03.5", "24:00:00", "-00:00:00.000001", "12:60:00"} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(6))
	}
	f.Fuzz(func(t *testing.T, s string, fd uint8) {
		col := timeCol(schema.Time, int(fd%10))
		got, err := Value(&col, s)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Reason == "" {
				t.Fatalf("Value(%q) error %v is not an *Error with a reason", s, err)
			}
			return
		}
		out := got.(string)
		again, err := Value(&col, out)
		if err != nil || again != out {
			t.Fatalf("Value(%q) = %q, but re-reading it gives %v, %v", s, out, again, err)
		}
		ns, _, reason := parseClock(out)
		want, _, _ := parseClock(s)
		if reason != "" || ns != want {
			t.Fatalf("Value(%q) = %q changes the duration (%d, want %d)", s, out, ns, want)
		}
	})
}
