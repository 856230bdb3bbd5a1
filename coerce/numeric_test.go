package coerce

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/schema"
)

func TestInt(t *testing.T) {
	big := intCol("BIGINT", 64)
	tiny := intCol("TINYINT", 8)
	small := intCol("SMALLINT", 16)
	medium := intCol("MEDIUMINT", 24)
	int32c := intCol("INT", 32)
	unset := intCol("INTEGER", 0)
	run(t, []tc{
		{col: big, in: num("42"), want: int64(42)},
		{col: big, in: num("0"), want: int64(0)},
		{col: big, in: num("-9223372036854775808"), want: int64(math.MinInt64)},
		{col: big, in: num("9223372036854775807"), want: int64(math.MaxInt64)},
		{col: big, in: num("9223372036854775808"), err: "out of range: the column holds -9223372036854775808 to 9223372036854775807"},
		{col: big, in: num("-9223372036854775809"), err: "out of range"},
		{col: big, in: num("18446744073709551616"), err: "out of range"},
		{col: big, in: num("1e100"), err: "out of range"},
		{col: big, in: num("-1e100"), err: "out of range"},
		{name: "canal string", col: big, in: "123", want: int64(123)},
		{col: big, in: "-77", want: int64(-77)},
		{col: big, in: num("5.0"), want: int64(5)},
		{col: big, in: num("5e2"), want: int64(500)},
		{col: big, in: num("-5.000E1"), want: int64(-50)},
		{col: big, in: num("1.2e1"), want: int64(12)},
		{col: big, in: num("9.223372036854775807e18"), want: int64(math.MaxInt64)},
		{col: big, in: num("-9.223372036854775808e18"), want: int64(math.MinInt64)},
		{col: big, in: num("0.0"), want: int64(0)},
		{col: big, in: num("-0"), want: int64(0)},
		{col: big, in: num("0e99"), want: int64(0)},
		{col: big, in: "+7", want: int64(7)},
		{col: big, in: "00012", want: int64(12)},
		{col: big, in: "0000000000000000000000000012", want: int64(12)},
		{col: big, in: num("1.5"), err: "is not an integer (txsink never rounds)"},
		{col: big, in: num("1e-3"), err: "is not an integer"},
		{col: big, in: num("-0.5"), err: "is not an integer"},
		{col: big, in: "12.0000001", err: "is not an integer"},
		{col: big, in: "", err: "is not a number"},
		{col: big, in: "abc", err: "is not a number"},
		{col: big, in: " 5", err: "is not a number"},
		{col: big, in: "5 ", err: "is not a number"},
		{col: big, in: "0x10", err: "is not a number"},
		{col: big, in: "1_000", err: "is not a number"},
		{col: big, in: "1e", err: "is not a number"},
		{col: big, in: "-", err: "is not a number"},
		{col: big, in: "NaN", err: "not a finite number"},
		{col: big, in: "-Infinity", err: "not a finite number"},
		{col: big, in: num("1e1000000001"), err: "exponent"},
		{col: big, in: true, want: int64(1)},
		{col: big, in: false, want: int64(0)},
		{col: big, in: int64(math.MinInt64), want: int64(math.MinInt64)},
		{col: big, in: 7, want: int64(7)},
		{col: big, in: int32(-7), want: int64(-7)},
		{col: big, in: int8(-8), want: int64(-8)},
		{col: big, in: uint8(200), want: int64(200)},
		{col: big, in: uint32(4000000000), want: int64(4000000000)},
		{col: big, in: uint64(math.MaxInt64), want: int64(math.MaxInt64)},
		{col: big, in: uint64(math.MaxInt64 + 1), err: "out of range"},
		{col: big, in: 3.0, want: int64(3)},
		{col: big, in: -9.223372036854775808e18, want: int64(math.MinInt64)},
		{col: big, in: 9.223372036854775808e18, err: "out of range"},
		{col: big, in: 1e300, err: "out of range"},
		{col: big, in: 3.5, err: "is not an integer"},
		{col: big, in: math.NaN(), err: "not a finite number"},
		{col: big, in: math.Inf(-1), err: "not a finite number"},
		{col: big, in: float32(2), want: int64(2)},
		{col: big, in: float32(2.5), err: "is not an integer"},
		{col: big, in: []byte("5"), err: "is binary data"},
		{col: big, in: changelog.JSON(`5`), err: "is a JSON"},
		{col: big, in: time.Unix(0, 0), err: "is a time, which cannot go into an int column"},
		{col: big, in: struct{}{}, err: "Go type struct {}"},

		{col: tiny, in: num("127"), want: int64(127)},
		{col: tiny, in: num("-128"), want: int64(-128)},
		{col: tiny, in: num("128"), err: "the column holds -128 to 127"},
		{col: tiny, in: num("-129"), err: "the column holds -128 to 127"},
		{col: tiny, in: int64(300), err: "the column holds -128 to 127"},
		{col: small, in: num("32767"), want: int64(32767)},
		{col: small, in: num("-32768"), want: int64(-32768)},
		{col: small, in: num("32768"), err: "the column holds -32768 to 32767"},
		{col: medium, in: num("8388607"), want: int64(8388607)},
		{col: medium, in: num("-8388608"), want: int64(-8388608)},
		{col: medium, in: num("8388608"), err: "the column holds -8388608 to 8388607"},
		{col: medium, in: num("-8388609"), err: "the column holds -8388608 to 8388607"},
		{col: int32c, in: num("2147483647"), want: int64(2147483647)},
		{col: int32c, in: num("-2147483648"), want: int64(-2147483648)},
		{col: int32c, in: num("2147483648"), err: "the column holds -2147483648 to 2147483647"},
		{col: int32c, in: 2.147483648e9, err: "the column holds -2147483648 to 2147483647"},
		{name: "bits unset is 64", col: unset, in: num("9223372036854775807"), want: int64(math.MaxInt64)},
	})
}

func TestUint(t *testing.T) {
	big := uintCol("BIGINT UNSIGNED", 64)
	tiny := uintCol("TINYINT UNSIGNED", 8)
	medium := uintCol("MEDIUMINT UNSIGNED", 24)
	int32c := uintCol("INT UNSIGNED", 32)
	run(t, []tc{
		{col: big, in: num("18446744073709551615"), want: uint64(math.MaxUint64)},
		{col: big, in: "18446744073709551615", want: uint64(math.MaxUint64)},
		{col: big, in: num("1.8446744073709551615e19"), want: uint64(math.MaxUint64)},
		{col: big, in: num("18446744073709551615.000"), want: uint64(math.MaxUint64)},
		{col: big, in: num("18446744073709551616"), err: "out of range: the column holds 0 to 18446744073709551615"},
		{col: big, in: num("99999999999999999999"), err: "out of range"},
		{col: big, in: num("100000000000000000000"), err: "out of range"},
		{col: big, in: num("0"), want: uint64(0)},
		{col: big, in: num("-0"), want: uint64(0)},
		{col: big, in: num("-0.0"), want: uint64(0)},
		{col: big, in: num("-1"), err: "the column holds 0 to"},
		{col: big, in: num("-1e0"), err: "the column holds 0 to"},
		{col: big, in: num("0.5"), err: "is not an integer"},
		{col: big, in: int64(-1), err: "the column holds 0 to"},
		{col: big, in: int64(math.MinInt64), err: "the column holds 0 to"},
		{col: big, in: uint64(math.MaxUint64), want: uint64(math.MaxUint64)},
		{col: big, in: uint(7), want: uint64(7)},
		{col: big, in: 7, want: uint64(7)},
		{col: big, in: true, want: uint64(1)},
		{col: big, in: 1.8446744073709552e19, err: "out of range"},
		{col: big, in: 1.8446744073709550e19, want: uint64(18446744073709549568)},
		{col: big, in: -1.0, err: "the column holds 0 to"},
		{col: big, in: "x", err: "is not a number"},
		{col: big, in: changelog.JSON(`{}`), err: "is a JSON"},
		{col: tiny, in: num("255"), want: uint64(255)},
		{col: tiny, in: num("256"), err: "the column holds 0 to 255"},
		{col: medium, in: num("16777215"), want: uint64(16777215)},
		{col: medium, in: num("16777216"), err: "the column holds 0 to 16777215"},
		{col: int32c, in: num("4294967295"), want: uint64(4294967295)},
		{col: int32c, in: num("4294967296"), err: "the column holds 0 to 4294967295"},
	})
}

func TestDecimal(t *testing.T) {
	d102 := decCol(10, 2)
	d103 := decCol(10, 3)
	d6530 := decCol(65, 30)
	d380 := decCol(38, 0)
	d3010 := decCol(30, 10)
	numeric := schema0()
	nines := func(n int) string { return strings.Repeat("9", n) }
	run(t, []tc{
		{col: d102, in: num("12.34"), want: "12.34"},
		{col: d102, in: "12.34", want: "12.34"},
		{col: d102, in: num("12.345"), err: "has 3 fractional digits, the column keeps 2 (txsink never rounds)"},
		{col: d102, in: num("0.001"), err: "has 3 fractional digits, the column keeps 2"},
		{col: d102, in: num("12.340"), want: "12.34"},
		{col: d102, in: num("12.3400000000"), want: "12.34"},
		{col: d102, in: num("12.3"), want: "12.3"},
		{col: d102, in: num("-0.05"), want: "-0.05"},
		{col: d102, in: num("12345678.99"), want: "12345678.99"},
		{col: d102, in: num("-12345678.99"), want: "-12345678.99"},
		{col: d102, in: num("123456789"), err: "has 9 integer digits, the column keeps 8"},
		{col: d102, in: num("123456789.001"), err: "has 3 fractional digits"},
		{col: d102, in: num("-0"), want: "0"},
		{col: d102, in: num("-0.00"), want: "0.00"},
		{col: d102, in: num("0.000"), want: "0.00"},
		{col: d102, in: num("0"), want: "0"},
		{col: d102, in: num("5e2"), want: "500"},
		{col: d102, in: num("1.5E+2"), want: "150"},
		{col: d102, in: num("1.25e1"), want: "12.5"},
		{col: d102, in: num("125e-2"), want: "1.25"},
		{col: d102, in: num("-5e-2"), want: "-0.05"},
		{col: d102, in: num("1e8"), err: "has 9 integer digits, the column keeps 8"},
		{col: d102, in: "+1.5", want: "1.5"},
		{col: d102, in: ".5", want: "0.5"},
		{col: d102, in: "-.5", want: "-0.5"},
		{col: d102, in: "5.", want: "5"},
		{col: d102, in: "007.50", want: "7.50"},
		{col: d102, in: "-000.010", want: "-0.01"},
		{col: d102, in: num("NaN"), err: "not a finite number"},
		{col: d102, in: "Infinity", err: "not a finite number"},
		{col: d102, in: "-inf", err: "not a finite number"},
		{col: d102, in: "1,5", err: "is not a number"},
		{col: d102, in: "", err: "is not a number"},
		{col: d102, in: ".", err: "is not a number"},
		{col: d102, in: "e5", err: "is not a number"},
		{col: d102, in: "1e", err: "is not a number"},
		{col: d102, in: "1e+", err: "is not a number"},
		{col: d102, in: "--1", err: "is not a number"},
		{col: d102, in: "1.2.3", err: "is not a number"},
		{col: d102, in: "１２", err: "is not a number"},
		{col: d102, in: num("1e-99999999999"), err: "exponent"},
		{col: d102, in: int64(42), want: "42"},
		{col: d102, in: int64(-42), want: "-42"},
		{col: d102, in: 7, want: "7"},
		{col: d102, in: int64(math.MaxInt64), err: "has 19 integer digits, the column keeps 8"},
		{col: d102, in: 0.1, want: "0.1"},
		{col: d102, in: 12.345, err: "has 3 fractional digits"},
		{col: d102, in: 1e-7, err: "has 7 fractional digits"},
		{col: d102, in: float32(0.1), want: "0.1"},
		{col: d102, in: math.NaN(), err: "not a finite number"},
		{col: d102, in: float32(math.Inf(1)), err: "not a finite number"},
		{col: d102, in: true, err: "is a boolean"},
		{col: d102, in: []byte("1"), err: "is binary data"},

		{name: "1e-3 scale 3", col: d103, in: num("1e-3"), want: "0.001"},
		{col: d103, in: num("1.0e-3"), want: "0.001"},
		{col: d103, in: num("1.1e-3"), err: "has 4 fractional digits, the column keeps 3"},
		{col: d103, in: num("0.000"), want: "0.000"},

		{name: "65,30 max", col: d6530, in: num(nines(35) + "." + nines(30)), want: nines(35) + "." + nines(30)},
		{name: "65,30 min", col: d6530, in: num("-" + nines(35) + "." + nines(30)), want: "-" + nines(35) + "." + nines(30)},
		{name: "65,30 too many integer digits", col: d6530, in: num("1" + nines(35) + ".5"), err: "has 36 integer digits, the column keeps 35"},
		{name: "65,30 too many fractional digits", col: d6530, in: num("0." + nines(31)), err: "has 31 fractional digits, the column keeps 30"},
		{name: "65,30 smallest", col: d6530, in: num("1e-30"), want: "0." + strings.Repeat("0", 29) + "1"},

		{name: "38,0 max", col: d380, in: num(nines(38)), want: nines(38)},
		{name: "38,0 too big", col: d380, in: num("1" + nines(38)), err: "has 39 integer digits, the column keeps 38"},
		{col: d380, in: num("1.0"), want: "1"},
		{col: d380, in: num("1.5"), err: "has 1 fractional digit, the column keeps none (txsink never rounds)"},
		{col: d380, in: uint64(math.MaxUint64), want: "18446744073709551615"},
		{col: d380, in: 1e21, want: "1000000000000000000000"},

		{col: d3010, in: num("12345678901234567890.1234567890"), want: "12345678901234567890.1234567890"},
		{col: d3010, in: num("123456789012345678901.123456789"), err: "has 21 integer digits, the column keeps 20"},

		{name: "numeric unconstrained", col: numeric, in: num("12345678901234567890.1234567890"), want: "12345678901234567890.1234567890"},
		{col: numeric, in: num("1e-20"), want: "0.00000000000000000001"},
		{col: numeric, in: num("1.50e1"), want: "15.0"},
		{col: numeric, in: num("-1.5e-1"), want: "-0.15"},
		{col: numeric, in: num("1e131071"), want: "1" + strings.Repeat("0", 131071)},
		{col: numeric, in: num("1e131072"), err: "has 131073 integer digits, the column keeps 131072"},
		{col: numeric, in: num("1e-16383"), want: "0." + strings.Repeat("0", 16382) + "1"},
		{col: numeric, in: num("1e-16384"), err: "has 16384 fractional digits, the column keeps 16383"},
		{name: "numeric zero with a huge scale", col: numeric, in: num("0e-20000"), want: "0." + strings.Repeat("0", 16383)},
		{col: numeric, in: num("0e20000"), want: "0"},
		{col: numeric, in: int64(math.MinInt64), want: "-9223372036854775808"},

		{name: "PG15 scale above precision", col: decCol(3, 5), in: num("0.00999"), want: "0.00999"},
		{col: decCol(3, 5), in: num("-0.00001"), want: "-0.00001"},
		{col: decCol(3, 5), in: num("0.01"), err: "magnitudes below 1e-2"},
		{col: decCol(3, 5), in: num("0"), want: "0"},
		{col: decCol(3, 5), in: num("0.000001"), err: "has 6 fractional digits, the column keeps 5"},
		{name: "PG15 negative scale", col: decCol(2, -3), in: num("12000"), want: "12000"},
		{col: decCol(2, -3), in: num("-9.9e4"), want: "-99000"},
		{col: decCol(2, -3), in: num("12300"), err: "is not a multiple of 1e3"},
		{col: decCol(2, -3), in: num("0.5"), err: "is not a multiple of 1e3"},
		{col: decCol(2, -3), in: num("123000"), err: "has 6 integer digits, the column keeps 5"},
		{col: decCol(2, -3), in: num("0.000"), want: "0"},
		{col: decCol(2, 2), in: num("0.99"), want: "0.99"},
		{col: decCol(2, 2), in: num("1"), err: "has 1 integer digit, the column keeps 0"},
	})
}

// schema0 returns an unconstrained numeric column (PostgreSQL's numeric).
func schema0() schema.Column {
	return schema.Column{Name: "amount", Class: schema.Decimal, SQLType: "numeric"}
}

func TestDecimalErrorMessage(t *testing.T) {
	col := decCol(10, 2)
	col.SQLType = "DECIMAL(10,2)"
	_, err := Value(&col, "12.345")
	want := `column amount DECIMAL(10,2): value "12.345" has 3 fractional digits, the column keeps 2 (txsink never rounds)`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v\nwant    %s", err, want)
	}
}

func TestDecimalCanonicalInputIsReturnedAsIs(t *testing.T) {
	// A canonical input needs no new string; the result is the input text.
	col := decCol(20, 4)
	for _, s := range []string{"0", "-1.5", "0.0500", "123456.7891"} {
		got, err := Value(&col, num(s))
		if err != nil || got != s {
			t.Errorf("Value(%s) = %v, %v; want %s", s, got, err, s)
		}
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := canonicalDecimal("123456.7891", 20, 4); err != "" {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("canonicalDecimal of canonical text allocates %v times", allocs)
	}
}

func TestFloat(t *testing.T) {
	double := floatCol(64)
	float := floatCol(32)
	unset := floatCol(0)
	run(t, []tc{
		{col: double, in: num("1.5"), want: 1.5},
		{col: double, in: "-2.25e3", want: -2250.0},
		{col: double, in: num("0.1"), want: 0.1},
		{col: double, in: num("1e308"), want: 1e308},
		{col: double, in: num("4.9e-324"), want: 4.9e-324},
		{col: double, in: num("0"), want: 0.0},
		{col: double, in: num("-0.0"), want: math.Copysign(0, -1)},
		{col: double, in: num("0e-999"), want: 0.0},
		{col: double, in: num("1e309"), err: "out of range for a 64-bit float"},
		{col: double, in: num("-1e309"), err: "out of range for a 64-bit float"},
		{col: double, in: num("1e-400"), err: "too small for a 64-bit float: it would become 0"},
		{col: double, in: "NaN", err: "not a finite number"},
		{col: double, in: "inf", err: "not a finite number"},
		{col: double, in: "-Infinity", err: "not a finite number"},
		{col: double, in: "0x1p-2", err: "is not a number"},
		{col: double, in: "1_0", err: "is not a number"},
		{col: double, in: "", err: "is not a number"},
		{col: double, in: int64(-3), want: -3.0},
		{col: double, in: uint64(1 << 63), want: 9.223372036854775808e18},
		{col: double, in: 7, want: 7.0},
		{col: double, in: 2.5, want: 2.5},
		{col: double, in: float32(0.5), want: 0.5},
		{col: double, in: math.NaN(), err: "not a finite number"},
		{col: double, in: math.Inf(1), err: "not a finite number"},
		{col: double, in: true, err: "is a boolean"},
		{col: unset, in: num("1e300"), want: 1e300},

		{col: float, in: num("3.4028235e38"), want: float64(float32(math.MaxFloat32))},
		{col: float, in: num("-3.4028235e38"), want: -float64(float32(math.MaxFloat32))},
		{col: float, in: num("3.5e38"), err: "out of range for a 32-bit float"},
		{col: float, in: num("1e-50"), err: "too small for a 32-bit float"},
		{col: float, in: num("0.1"), want: float64(float32(0.1))},
		{col: float, in: num("1.5"), want: 1.5},
		{col: float, in: 1e39, err: "out of range for a 32-bit float"},
		{col: float, in: 1e-50, err: "too small for a 32-bit float"},
		{col: float, in: 0.1, want: float64(float32(0.1))},
		{name: "int to float32 goes to the nearest float", col: float, in: int64(16777217), want: 16777216.0},
	})
}

func TestBool(t *testing.T) {
	col := schema.Column{Name: "flag", Class: schema.Bool, SQLType: "boolean"}
	run(t, []tc{
		{col: col, in: true, want: true},
		{col: col, in: false, want: false},
		{col: col, in: num("1"), want: true},
		{col: col, in: num("0"), want: false},
		{col: col, in: num("2"), err: "is not a boolean"},
		{col: col, in: num("1.0"), err: "is not a boolean"},
		{col: col, in: "true", want: true},
		{col: col, in: "TRUE", want: true},
		{col: col, in: "False", want: false},
		{col: col, in: "t", want: true},
		{col: col, in: "T", want: true},
		{col: col, in: "f", want: false},
		{col: col, in: "F", want: false},
		{col: col, in: "1", want: true},
		{col: col, in: "0", want: false},
		{col: col, in: "yes", err: "want true/false, t/f or 1/0"},
		{col: col, in: "", err: "is not a boolean"},
		{col: col, in: "truex", err: "is not a boolean"},
		{col: col, in: int64(1), want: true},
		{col: col, in: 0, want: false},
		{col: col, in: uint64(1), want: true},
		{col: col, in: int64(2), err: "is not a boolean"},
		{col: col, in: uint64(2), err: "is not a boolean"},
		{col: col, in: 1.0, err: "Go type float64"},
		{col: col, in: []byte{1}, err: "is binary data"},
	})
}

// TestDecimalFastPath holds canonicalDecimal's fast path to the general
// one: whatever it accepts as written, the general path (made to run by
// an exponent, which the fast path never takes) turns into the same text.
func TestDecimalFastPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "0123456789"[rng.IntN(10)]
		}
		return string(b)
	}
	for range 20000 {
		s := digits(rng.IntN(6))
		if rng.IntN(2) == 0 {
			s += "." + digits(rng.IntN(5))
		}
		if rng.IntN(3) == 0 {
			s = "-" + s
		}
		for _, ps := range [][2]int{{10, 2}, {5, 0}, {3, 3}, {0, 0}, {4, 6}, {6, -2}} {
			if !fitsAsWritten(s, ps[0], ps[1]) {
				continue
			}
			if got, reason := canonicalDecimal(s+"e0", ps[0], ps[1]); reason != "" || got != s {
				t.Fatalf("%q into (%d,%d): fast path keeps it, general path gives %q %q", s, ps[0], ps[1], got, reason)
			}
		}
	}
}
