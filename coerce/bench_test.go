package coerce

import (
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/internal/cputime"
	"github.com/txsink/txsink/schema"
)

// bench converts in for col b.N times.
func bench(b *testing.B, col schema.Column, in changelog.Value) {
	b.Helper()
	if _, err := Value(&col, in); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := Value(&col, in); err != nil {
			b.Fatal(err)
		}
	}
}

// reportCPU starts measuring the process's CPU time; the function it
// returns reports it per op as cpu-ns/op. On a machine shared with other
// work, wall time (ns/op) measures the neighbours too; CPU time, run with
// GOMAXPROCS=1, much less so.
func reportCPU(b *testing.B) func() {
	cpu0, ok0 := cputime.Process()
	return func() {
		if cpu1, ok1 := cputime.Process(); ok0 && ok1 && b.N > 0 {
			b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
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

// workloadCols and workloadVals are the columns of txsink bench's orders and
// order_items tables (as a MySQL catalog describes them) with values as the
// debezium-json decoder delivers them for the insert-only workload: numbers
// as Number, text and date-times as string, a NULL note.
var (
	workloadCols = []schema.Column{
		{Name: "id", Class: schema.Int, Bits: 64, SQLType: "bigint"},
		{Name: "customer", Class: schema.String, Length: 64, SQLType: "varchar(64)"},
		{Name: "status", Class: schema.String, Length: 16, SQLType: "varchar(16)"},
		{Name: "amount", Class: schema.Decimal, Precision: 12, Scale: 2, SQLType: "decimal(12,2)"},
		{Name: "created_at", Class: schema.DateTime, FracDigits: 3, SQLType: "datetime(3)"},
		{Name: "note", Class: schema.String, Length: 200, Nullable: true, SQLType: "varchar(200)"},
		{Name: "order_id", Class: schema.Int, Bits: 64, SQLType: "bigint"},
		{Name: "line_no", Class: schema.Int, Bits: 32, SQLType: "int"},
		{Name: "sku", Class: schema.String, Length: 32, SQLType: "varchar(32)"},
		{Name: "qty", Class: schema.Int, Bits: 32, SQLType: "int"},
		{Name: "price", Class: schema.Decimal, Precision: 10, Scale: 2, SQLType: "decimal(10,2)"},
	}
	workloadVals = []changelog.Value{
		num("48213"), "c213", "NEW", num("360.13"), "2026-11-01 09:23:45.000", nil,
		num("48213"), num("2"), "SKU-37502", num("2"), num("213.14"),
	}
)

// BenchmarkWorkload converts one value per column of the bench workload's
// tables, and all of them as one op ("row"), to show where a row's
// conversion cost goes.
func BenchmarkWorkload(b *testing.B) {
	for i := range workloadCols {
		b.Run(workloadCols[i].Name, func(b *testing.B) {
			bench(b, workloadCols[i], workloadVals[i])
		})
	}
	b.Run("row", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			for i := range workloadCols {
				if _, err := Value(&workloadCols[i], workloadVals[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
