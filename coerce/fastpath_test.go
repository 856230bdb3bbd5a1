package coerce

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

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
		"2026-11-01 09:23:45.000", "2024-02-29T23:59:59.123456789", "2023-02-29 00:00:00",
		"2026-11-01 09:23:45.1234567890", "2026-11-01 09:23:45Z",
	} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, shape uint8) {
		bits := []int{0, 8, 16, 24, 32, 64}[int(shape)%6]
		for _, in := range []changelog.Value{num(s), s} {
			sameAsGeneral(t, toIntAny, intCol("INT", bits), in)
			sameAsGeneral(t, toUintAny, uintCol("INT UNSIGNED", bits), in)
			// ShortInt within IntRange is Int64 (see ShortInt).
			col := intCol("INT", bits)
			n, ok := Int64(&col, in)
			sn, sok := ShortInt(in)
			lo, hi := IntRange(&col)
			if sok = sok && lo <= sn && sn <= hi; ok != sok || ok && n != sn {
				t.Errorf("INT(%d) %#v: Int64 %d, %v; ShortInt within IntRange %d, %v", bits, in, n, ok, sn, sok)
			}
		}
		sameAsGeneral(t, toDateTimeAny, timeCol(schema.DateTime, int(shape)%10), s)
		sameAsGeneral(t, toStringAny, strCol(int(shape)%20), s)
		for _, in := range []changelog.Value{num(s), s} {
			sameAsGeneral(t, toDecimalAny, decCol(int(shape)%20, int(shape/20)%8-1), in)
		}
	})
}

// TestDateTimeFastPath holds toDateTime's fast path (plainDateTime) to the
// general path: fraction lengths around 9, significant digits around the
// column's, calendar and clock edges, zones and separators it leaves to the
// general path, and malformed text.
func TestDateTimeFastPath(t *testing.T) {
	ins := []string{
		"2026-11-01 09:23:45", "2026-11-01T09:23:45", "2026-11-01t09:23:45", "2026-11-01_09:23:45",
		"2026-11-01 09:23:45.000", "2026-11-01 09:23:45.1", "2026-11-01 09:23:45.120", "2026-11-01 09:23:45.123",
		"2026-11-01 09:23:45.1234", "2026-11-01 09:23:45.123456", "2026-11-01 09:23:45.000001",
		"2026-11-01 09:23:45.123456789", "2026-11-01 09:23:45.000000000", "2026-11-01 09:23:45.1234567890",
		"2026-11-01 09:23:45.0000000000", "2026-11-01 09:23:45.", "2026-11-01 09:23:45.12a",
		"2026-11-01 09:23:45.-1", "2026-11-01 09:23:45,123", "2026-11-01 09:23:45x",
		"2026-11-01 09:23:45Z", "2026-11-01 09:23:45.5Z", "2026-11-01 09:23:45+00:00", "2026-11-01 09:23:45-07:00",
		"2026-11-01 09:23:45.123+05:30", "2026-11-01", "2026-11-01 09:23",
		"0001-01-01 00:00:00", "0000-12-31 23:59:59", "9999-12-31 23:59:59.999999999",
		"1970-01-01 00:00:00", "1969-12-31 23:59:59.999", "1600-02-29 12:00:00", "1900-02-29 12:00:00",
		"2000-02-29 12:00:00", "2023-02-29 12:00:00", "2024-02-29 12:00:00", "2100-02-29 12:00:00",
		"2020-01-31 00:00:00", "2020-04-31 00:00:00", "2020-12-31 00:00:00", "2020-13-01 00:00:00",
		"2020-00-10 00:00:00", "2020-01-00 00:00:00", "2020-01-32 00:00:00", "2020-01-01 24:00:00",
		"2020-01-01 23:60:00", "2020-01-01 23:59:60", "2020-01-01 99:99:99", "2020-0a-13 00:00:00",
		"202a-01-13 00:00:00", "2020-01-13 0:00:00 ", "-020-01-13 00:00:00", "+020-01-13 00:00:00",
		"2020/01/13 00:00:00", "２０２０-01-13 00:00:00", "2020-01-13 00:00:0/", "2020-01-13 00:00::0",
	}
	for _, class := range []schema.Class{schema.DateTime, schema.Timestamp} {
		for _, fd := range []int{0, 1, 3, 6, 9, 12, -1} {
			col := timeCol(class, fd)
			col.SQLType = fmt.Sprintf("%s(%d)", class, fd)
			for _, s := range ins {
				sameAsGeneral(t, toDateTimeAny, col, s)
			}
			for _, in := range []changelog.Value{num("1589355606123"), int64(-1), time.Date(2020, 5, 13, 7, 40, 6, 0, time.UTC), true} {
				sameAsGeneral(t, toDateTimeAny, col, in)
			}
		}
	}
}

// TestDecimalTypeFastPath holds toDecimal's early check of a Number or
// string already canonical and within the column to the general path:
// precision and scale overflow, trailing and leading zeros, negative
// zero, and the spellings only the general path rewrites.
func TestDecimalTypeFastPath(t *testing.T) {
	ins := []string{
		"360.13", "360.1", "360.130", "360.131", "360", "-360.13", "0", "-0", "0.00", "-0.00", "-0.0",
		"0.001", "-0.001", "0.10", "00.5", "-00.5", "007", ".5", "5.", "-.5", "+5", "1e2", "1.5E-1", "0e0",
		"9999999999.99", "-9999999999.99", "10000000000.00", "99999999999", "9999999999.999", "0.9999",
		"99999.99999", "123456789012345678901234567890.1234567890", "", "-", ".", "1.2.3", "1_0", "NaN",
		"-Infinity", "１", " 1", "1 ",
	}
	for _, ps := range [][2]int{{12, 2}, {10, 2}, {0, 0}, {5, 0}, {3, 5}, {6, -2}, {38, 10}, {2, 2}, {1, 0}} {
		col := decCol(ps[0], ps[1])
		col.SQLType = fmt.Sprintf("DECIMAL(%d,%d)", ps[0], ps[1])
		for _, s := range ins {
			sameAsGeneral(t, toDecimalAny, col, num(s))
			sameAsGeneral(t, toDecimalAny, col, s)
		}
		for _, in := range []changelog.Value{int64(-5), uint64(7), 0.1, true, []byte("1")} {
			sameAsGeneral(t, toDecimalAny, col, in)
		}
	}
}

// TestStringFastPath holds toString's fast path to the general path:
// lengths around the column's in bytes and in characters, and invalid
// UTF-8 of each kind.
func TestStringFastPath(t *testing.T) {
	ins := []string{
		"", "a", "abcd", "abcde", "NEW", "c213", "SKU-37502", "日本", "日本語", "日本語の", "日本語のテ",
		"ab日", "abc日", "€", "😀😀", "😀😀😀😀", "😀😀😀😀😀",
		"\xff", "a\xff", "abcd\xff", "\xc3", "ab\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
		"\xef\xbf\xbd", "a\x00b", "\u2028",
	}
	for _, length := range []int{-1, 0, 1, 3, 4, 5, 16} {
		col := strCol(length)
		col.SQLType = fmt.Sprintf("VARCHAR(%d)", length)
		for _, s := range ins {
			sameAsGeneral(t, toStringAny, col, s)
			sameAsGeneral(t, toStringAny, col, []byte(s))
		}
		for _, in := range []changelog.Value{num("48213"), true, int64(-5), 1.5, changelog.JSON(`{"a":1}`)} {
			sameAsGeneral(t, toStringAny, col, in)
		}
	}
}

// TestPlainDateTime checks which shapes the date-time fast path takes.
func TestPlainDateTime(t *testing.T) {
	for _, c := range []struct {
		in string
		fd int
		ok bool
	}{
		{"2026-11-01 09:23:45", 0, true},
		{"2026-11-01T09:23:45.000", 0, true},
		{"2026-11-01 09:23:45.120", 2, true},
		{"2026-11-01 09:23:45.123", 2, false}, // an error: left to the general path
		{"2026-11-01 09:23:45.123456789", 9, true},
		{"2026-11-01 09:23:45.1234567890", 9, false},
		{"2026-11-01 09:23:45Z", 0, false},
		{"2026-11-01", 0, false},
		{"2023-02-29 09:23:45", 0, false},
	} {
		got, ok := plainDateTime(c.in, c.fd)
		if ok != c.ok {
			t.Errorf("plainDateTime(%q, %d) ok = %v, want %v", c.in, c.fd, ok, c.ok)
		}
		if ok {
			want, _ := time.Parse("2006-01-02 15:04:05.999999999", strings.Replace(c.in, "T", " ", 1))
			if got != want {
				t.Errorf("plainDateTime(%q, %d) = %#v, want %#v", c.in, c.fd, got, want)
			}
		}
	}
}

// TestCivilDays checks the day count plainDateTime computes against
// time.Date's, for every day of years 1 to 9999 (about 3.65 million).
func TestCivilDays(t *testing.T) {
	want := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Unix() / 86400
	for d := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() < 10000; d = d.AddDate(0, 0, 1) {
		y, m, day := d.Date()
		if got := CivilDays(y, int(m), day); got != want {
			t.Fatalf("CivilDays(%d, %d, %d) = %d, want %d", y, m, day, got, want)
		}
		want++
	}
}
