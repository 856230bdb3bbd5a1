package postgres

import (
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

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

// encodeShapes are groups shaped as the insert-only bench's: its orders
// and its order items, with the columns' classes and type OIDs.
var encodeShapes = []struct {
	name string
	cols []*schema.Column
	oids []uint32
	row  func(i int) []any
}{
	{"orders", []*schema.Column{{Class: schema.Int, Bits: 64}, {Class: schema.String}, {Class: schema.String},
		{Class: schema.Decimal}, {Class: schema.DateTime, FracDigits: 3}, {Class: schema.String, Nullable: true}},
		[]uint32{20, 1043, 1043, 1700, 1114, 1043},
		func(i int) []any {
			return []any{int64(1e6 + i), "Margaret Hamilton", "SHIPPED", "1234.50", time.Date(2026, 1, 2, 3, 4, 5, i%1000*1e6, time.UTC), nil}
		}},
	{"items", []*schema.Column{{Class: schema.Int, Bits: 64}, {Class: schema.Int, Bits: 32}, {Class: schema.String},
		{Class: schema.Int, Bits: 32}, {Class: schema.Decimal}},
		[]uint32{20, 23, 1043, 23, 1700},
		func(i int) []any { return []any{int64(1e6 + i/3), int64(i%3 + 1), "SKU-12345", int64(2), "19.99"} }},
}

// BenchmarkEncodeGroup encodes a group of 1000 rows as Load does, without
// a server: text COPY, binary COPY (binaryValues' check of the group,
// then the rows), and binary through pgx's pgtype codecs (a plan per
// column, found once), read by 64 KiB as pgconn reads. One op is a group.
func BenchmarkEncodeGroup(b *testing.B) {
	for _, sh := range encodeShapes {
		rows := make([][]any, 1000)
		for i := range rows {
			rows[i] = sh.row(i)
		}
		kinds := make([]binKind, len(sh.oids))
		for i, oid := range sh.oids {
			kinds[i] = binKinds[oid]
		}
		p := make([]byte, 65536)
		drain := func(b *testing.B, r io.Reader) {
			for {
				if _, err := r.Read(p); err == io.EOF {
					return
				} else if err != nil {
					b.Fatal(err)
				}
			}
		}
		b.Run(sh.name+"/text", func(b *testing.B) {
			r := &copyReader{}
			for b.Loop() {
				*r = copyReader{cols: sh.cols, rows: rows, buf: r.buf[:0]}
				drain(b, r)
			}
		})
		b.Run(sh.name+"/binary", func(b *testing.B) {
			r := &copyReader{}
			for b.Loop() {
				if !binaryValues(kinds, rows) {
					b.Fatal("binaryValues refused the group")
				}
				*r = copyReader{cols: sh.cols, rows: rows, kinds: kinds, buf: append(r.buf[:0], copyBinaryHeader...)}
				drain(b, r)
			}
		})
		b.Run(sh.name+"/pgtype", func(b *testing.B) {
			m := pgtype.NewMap()
			plans := make([]pgtype.EncodePlan, len(sh.oids))
			for i, oid := range sh.oids {
				for _, row := range rows {
					if v := pgtypeValue(oid, row[i]); v != nil {
						plans[i] = m.PlanEncode(oid, pgtype.BinaryFormatCode, v)
						break
					}
				}
			}
			var buf []byte
			for b.Loop() {
				buf = append(buf[:0], copyBinaryHeader...)
				for _, row := range rows {
					buf = binary.BigEndian.AppendUint16(buf, uint16(len(row)))
					for i, v := range row {
						v = pgtypeValue(sh.oids[i], v)
						if v == nil {
							buf = binary.BigEndian.AppendUint32(buf, math.MaxUint32)
							continue
						}
						at := len(buf)
						buf = append(buf, 0, 0, 0, 0)
						var err error
						if buf, err = plans[i].Encode(v, buf); err != nil {
							b.Fatal(err)
						}
						binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
					}
				}
				buf = append(buf, 0xff, 0xff)
			}
		})
	}
}

// pgtypeValue is v as pgtype's encoder for oid takes it: a numeric's
// text parsed into a pgtype.Numeric, anything else as it is.
func pgtypeValue(oid uint32, v any) any {
	s, ok := v.(string)
	if !ok || oid != 1700 {
		return v
	}
	var n pgtype.Numeric
	if err := n.Scan(s); err != nil {
		panic(err)
	}
	return n
}
