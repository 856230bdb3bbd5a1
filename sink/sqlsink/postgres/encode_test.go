package postgres

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/txsink/txsink/schema"
)

// TestAppendTime checks appendTime against time's own formatting of the
// layouts it writes, for instants across years 1 to 9999 and beyond.
func TestAppendTime(t *testing.T) {
	layouts := []struct {
		col    schema.Column
		layout string
	}{
		{schema.Column{Class: schema.DateTime}, "2006-01-02 15:04:05.999999999"},
		{schema.Column{Class: schema.Date}, "2006-01-02"},
		{schema.Column{Class: schema.Timestamp}, "2006-01-02 15:04:05.999999999-07:00"},
	}
	r := rand.New(rand.NewPCG(1, 2))
	times := []time.Time{
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 120000000, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 1, time.FixedZone("x", -5*3600)),
		time.Date(0, 6, 1, 12, 0, 0, 0, time.UTC),
		time.Date(-44, 3, 15, 12, 0, 0, 0, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 5000, time.UTC),
	}
	for range 20000 {
		sec := r.Int64N(time.Date(10001, 1, 1, 0, 0, 0, 0, time.UTC).Unix()-time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC).Unix()) + time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
		ns := []int64{0, r.Int64N(1e9), r.Int64N(1000) * 1e6, r.Int64N(1e6) * 1e3}[r.IntN(4)]
		times = append(times, time.Unix(sec, ns).In(time.FixedZone("z", r.IntN(48*1800)-24*1800)))
	}
	for _, l := range layouts {
		for _, tm := range times {
			want := tm.UTC().Format(l.layout)
			if got := string(appendTime(nil, &l.col, tm)); got != want {
				t.Fatalf("appendTime(%s, %v) = %q, want %q", l.col.Class, tm, got, want)
			}
		}
	}
}

// BenchmarkAppendCopyRow encodes rows shaped as the insert-only bench's
// orders in COPY's text format.
func BenchmarkAppendCopyRow(b *testing.B) {
	cols := []*schema.Column{{Class: schema.Int, Bits: 64}, {Class: schema.String}, {Class: schema.String},
		{Class: schema.Decimal}, {Class: schema.DateTime, FracDigits: 3}, {Class: schema.String, Nullable: true}}
	rows := make([][]any, 1000)
	for i := range rows {
		rows[i] = []any{int64(1e6 + i), "customer-123", "SHIPPED", "1234.50", time.Date(2026, 1, 2, 3, 4, 5, i%1000*1e6, time.UTC), nil}
	}
	var buf []byte
	for b.Loop() {
		buf = buf[:0]
		for _, row := range rows {
			buf = appendCopyRow(buf, cols, row)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)), "ns/row")
}
