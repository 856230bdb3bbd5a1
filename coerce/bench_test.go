package coerce

import (
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/schema"
)

// bench converts in for col b.N times.
func bench(b *testing.B, col schema.Column, in changelog.Value) {
	b.Helper()
	if _, err := Value(&col, in); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Value(&col, in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIntNumber(b *testing.B)   { bench(b, intCol("BIGINT", 64), num("1589355606100")) }
func BenchmarkIntSmall(b *testing.B)    { bench(b, intCol("INT", 32), num("42")) }
func BenchmarkIntString(b *testing.B)   { bench(b, intCol("BIGINT", 64), "-1589355606100") }
func BenchmarkIntExponent(b *testing.B) { bench(b, intCol("BIGINT", 64), num("1.5893556061e12")) }
func BenchmarkUintMax(b *testing.B) {
	bench(b, uintCol("BIGINT UNSIGNED", 64), num("18446744073709551615"))
}
func BenchmarkDecimalCanonical(b *testing.B) { bench(b, decCol(20, 4), num("12345.6789")) }
func BenchmarkDecimalRewrite(b *testing.B)   { bench(b, decCol(20, 4), num("12345.678900")) }
func BenchmarkDecimalExponent(b *testing.B)  { bench(b, decCol(20, 4), num("1.23456789E4")) }
func BenchmarkDecimalWide(b *testing.B) {
	bench(b, decCol(65, 30), num("12345678901234567890.123456789012345678901234567890"))
}
func BenchmarkStringASCII(b *testing.B) {
	bench(b, strCol(255), "The quick brown fox jumps over the lazy dog")
}
func BenchmarkStringMultibyteCounted(b *testing.B) {
	bench(b, strCol(20), "日本語のテキストです、これは十八文字")
}
func BenchmarkFloat(b *testing.B) { bench(b, floatCol(64), num("3.14159265358979")) }
func BenchmarkDateTimeString(b *testing.B) {
	bench(b, timeCol(schema.DateTime, 6), "2020-05-13 07:40:06.123456")
}
func BenchmarkDateTimeZoned(b *testing.B) {
	bench(b, timeCol(schema.Timestamp, 6), "2020-05-13T07:40:06.123456+05:30")
}
func BenchmarkDateTimeMicros(b *testing.B) {
	bench(b, timeCol(schema.DateTime, 6), num("1589355606123456"))
}
func BenchmarkDateTimeMillis(b *testing.B) {
	bench(b, timeCol(schema.DateTime, 3), int64(1589355606123))
}
func BenchmarkDate(b *testing.B) { bench(b, timeCol(schema.Date, 0), num("18262")) }
func BenchmarkTime(b *testing.B) { bench(b, timeCol(schema.Time, 6), "12:34:56.123456") }
