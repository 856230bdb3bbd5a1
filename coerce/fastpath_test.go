package coerce

import (
	"reflect"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/schema"
)

// general is the path a class's fast path stands in front of: it must give
// the same result or the same error for every input.
type general func(*schema.Column, changelog.Value) (any, error)

// sameAsGeneral checks that Value gives for col and in exactly what the
// general path gives: the same Go type and value, or the same error.
func sameAsGeneral(t *testing.T, g general, col schema.Column, in changelog.Value) {
	t.Helper()
	got, err := Value(&col, in)
	want, wantErr := g(&col, in)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("%s %T %s: error %v, general path %v", col.SQLType, in, Describe(in), err, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s %T %s: %#v (%T), general path %#v (%T)", col.SQLType, in, Describe(in), got, got, want, want)
	}
}

// TestIntFastPath holds toInt's and toUint's fast path (shortIntOf) to the
// general path, at its edges: the longest integer it takes and the
// shortest it leaves, signs, zeros, the ends of every width, and the
// shapes it must leave to the general path.
func TestIntFastPath(t *testing.T) {
	ins := []string{
		"0", "-0", "+0", "00", "-00", "007", "-007", "1", "-1", "+1", "48213",
		"127", "128", "-128", "-129", "255", "256", "32767", "32768", "-32768", "-32769",
		"8388607", "8388608", "-8388608", "-8388609", "16777215", "16777216",
		"2147483647", "2147483648", "-2147483648", "-2147483649", "4294967295", "4294967296",
		"999999999999999999", "-999999999999999999", "000000000000000001", "-000000000000000000",
		"1000000000000000000", "-1000000000000000000", "0000000000000000001",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"18446744073709551615", "18446744073709551616", "-18446744073709551616",
		"1e3", "1E3", "-1e3", "1.0", "-1.0", "1.5", "1.", ".1", "5e-1", "1e-0",
		"", "-", "+", "--1", "-+1", "1-", " 1", "1 ", "1_000", "0x10", "１", "1\x00",
		"/", ":", "-/", "NaN", "Infinity", "-Inf",
	}
	var cols []schema.Column
	for _, bits := range []int{0, 8, 16, 24, 32, 64, 65} {
		cols = append(cols, intCol("INT", bits), uintCol("INT UNSIGNED", bits))
	}
	for _, col := range cols {
		g := general(toIntAny)
		if col.Class == schema.Uint {
			g = toUintAny
		}
		for _, s := range ins {
			sameAsGeneral(t, g, col, num(s))
			sameAsGeneral(t, g, col, s)
		}
		for _, in := range []changelog.Value{nil, int64(-5), uint64(7), true, 2.0, []byte("1")} {
			if in != nil || col.Nullable {
				sameAsGeneral(t, g, col, in)
			}
		}
	}
}

// TestShortIntOf checks which shapes the integer fast path takes.
func TestShortIntOf(t *testing.T) {
	for _, c := range []struct {
		in   changelog.Value
		want int64
		ok   bool
	}{
		{num("48213"), 48213, true},
		{"48213", 48213, true},
		{num("-0"), 0, true},
		{num("007"), 7, true},
		{num("999999999999999999"), 999999999999999999, true},
		{num("-999999999999999999"), -999999999999999999, true},
		{num("1000000000000000000"), 0, false}, // 19 digits: left to readInteger
		{num("+1"), 0, false},
		{num("1e3"), 0, false},
		{num("-"), 0, false},
		{num(""), 0, false},
		{num("1/"), 0, false},
		{int64(5), 0, false},
		{[]byte("5"), 0, false},
	} {
		if n, ok := shortIntOf(c.in); n != c.want || ok != c.ok {
			t.Errorf("shortIntOf(%#v) = %d, %v, want %d, %v", c.in, n, ok, c.want, c.ok)
		}
	}
}

// FuzzFastPaths holds every fast path to its general path on arbitrary
// text, as a Number and as a string, for columns of each shape it serves.
func FuzzFastPaths(f *testing.F) {
	for _, s := range []string{
		"0", "-0", "007", "48213", "-9223372036854775808", "18446744073709551615",
		"999999999999999999", "1000000000000000000", "1e3", "1.5", "", "-", "+1",
	} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, shape uint8) {
		bits := []int{0, 8, 16, 24, 32, 64}[int(shape)%6]
		for _, in := range []changelog.Value{num(s), s} {
			sameAsGeneral(t, toIntAny, intCol("INT", bits), in)
			sameAsGeneral(t, toUintAny, uintCol("INT UNSIGNED", bits), in)
		}
	})
}
