package mysql

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/internal/bulktext"
)

// encodeShapes are groups shaped as the insert-only bench's, with the
// values reduce hands the loader for them: its orders (BIGINT, two
// VARCHARs, DECIMAL's canonical text, DATETIME(3), a NULL note) and its
// order items (BIGINT, two INTs, VARCHAR, DECIMAL).
var encodeShapes = []struct {
	name string
	row  func(i int) []any
}{
	{"orders", func(i int) []any {
		return []any{int64(1e6 + i), "Margaret Hamilton", "SHIPPED", "1234.50", time.Date(2026, 1, 2, 3, 4, 5, i%1000*1e6, time.UTC), nil}
	}},
	{"items", func(i int) []any { return []any{int64(1e6 + i/3), int64(i%3 + 1), "SKU-12345", int64(2), "19.99"} }},
}

// BenchmarkEncodeGroup encodes a group of 1000 rows as Load streams it,
// without a server: the rowReader read by the 16 KiB the driver sends a
// LOAD DATA LOCAL file in. One op is a group.
//
//	scripts/cpu-per-event.sh ./sink/sqlsink/mysql 'BenchmarkEncodeGroup/^orders$' 20 80
func BenchmarkEncodeGroup(b *testing.B) {
	for _, sh := range encodeShapes {
		rows := make([][]any, 1000)
		for i := range rows {
			rows[i] = sh.row(i)
		}
		p := make([]byte, loadPacket-4)
		b.Run(sh.name, func(b *testing.B) {
			r := newRowReader(rows)
			for b.Loop() {
				*r = rowReader{rows: rows, buf: r.buf[:0]}
				for {
					if _, err := r.Read(p); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
				}
				if r.err != nil {
					b.Fatal(r.err)
				}
			}
		})
	}
}

// trickyValues are values of every type the loader may be handed, with
// the edges of each: escapes at every end of a word, NUL, \N as text,
// every byte, extreme numbers, date-times with and without fractions in
// any zone and outside years 1 to 9999, and types database/sql converts
// first.
func trickyValues() []any {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	n := int64(-5)
	var null *int64
	vals := []any{
		nil, int64(0), int64(-1), int64(7), int64(math.MinInt64), int64(math.MaxInt64), int64(1e6), int64(-99),
		uint64(0), uint64(math.MaxUint64), uint64(1 << 63),
		"", "a", "ab", "abc", "abcd", "SHIPPED", "12345678", "123456789", "Margaret Hamilton", `\N`, "NULL",
		"\t", "\n", "\r", "\\", "\x00", "a\tb\nc\\d\re\x00f", "seven\t", "\teight!", "0123456\\", "\\0123456789abcdef",
		"0123456789abcdef\n", "é李😀 multibyte", "\x7f\x80\xff", " trailing  ", "\x01\x1f\x20",
		all, []byte{}, []byte(`\N`), []byte{0, '\\', '\t', '\n', 0xff}, []byte("plain bytes"),
		0.0, math.Copysign(0, -1), 1.5, 0.1, 1e300, -2.2250738585072014e-308, 5e-324, math.Inf(1), math.Inf(-1), math.NaN(),
		float32(0.1), true, false,
		time.Date(2026, 1, 2, 3, 4, 5, 120000000, time.UTC), time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 2, 0, 0, 0, 1, time.UTC), time.Date(2026, 1, 2, 0, 30, 0, 0, time.FixedZone("x", 3600)),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(999, 6, 30, 12, 0, 0, 1000, time.UTC), time.Date(9, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(2000, 2, 29, 23, 59, 59, 999000000, time.FixedZone("y", -7*3600)), time.Time{},
		time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		int(42), int32(-7), uint8(255), changelog.Number("1234.50"), namedBytes("[1]"), &n, null, struct{}{},
	}
	return vals
}

// encodeBoth encodes rows by the reference (refRow) and by rowReader's
// appendRow with one DateTimes for them all, as a load does, and fails t
// on the first row whose bytes or error differ.
func encodeBoth(t *testing.T, rows [][]any) {
	t.Helper()
	var dates bulktext.DateTimes
	var got, want []byte
	for _, row := range rows {
		g, gerr := appendRow(got, row, &dates)
		w, werr := refRow(want, row)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("row %#v: error %v, the reference's %v", row, gerr, werr)
		}
		if gerr != nil {
			continue // Read drops a row it cannot encode
		}
		if !bytes.Equal(g, w) {
			t.Fatalf("row %#v:\n got %q\nwant %q", row, g[len(got):], w[len(want):])
		}
		got, want = g, w
	}
}

// TestEncoderMatchesReference holds appendRow to the encoder it replaced
// (loadtext_ref_test.go): each tricky value alone, every pair of them in
// both orders, and random rows of them through the reader at several read
// sizes.
func TestEncoderMatchesReference(t *testing.T) {
	vals := trickyValues()
	var rows [][]any
	for _, v := range vals {
		rows = append(rows, []any{v})
		for _, w := range vals {
			rows = append(rows, []any{v, w})
		}
	}
	encodeBoth(t, rows)
	r := rand.New(rand.NewPCG(7, 8))
	rows = rows[:0]
	var want []byte
	for range 2000 {
		row := make([]any, 1+r.IntN(8))
		for i := range row {
			row[i] = vals[r.IntN(len(vals))]
		}
		if w, err := refRow(want, row); err == nil {
			want = w
			rows = append(rows, row)
		}
	}
	encodeBoth(t, rows)
	for _, size := range []int{1, 7, 4096, loadPacket - 4} {
		rr := newRowReader(rows)
		var got []byte
		p := make([]byte, size)
		for {
			n, err := rr.Read(p)
			got = append(got, p[:n]...)
			if err == io.EOF {
				break
			}
		}
		if rr.err != nil || !bytes.Equal(got, want) {
			t.Fatalf("reads of %d bytes: %d bytes (err %v), the reference's %d differ", size, len(got), rr.err, len(want))
		}
	}
}

// FuzzEncoder compares appendRow with the reference on rows of fuzzed
// text, bytes, numbers and instants, in the fuzzer's order and reversed.
func FuzzEncoder(f *testing.F) {
	f.Add("a\tb", []byte{0, '\\'}, int64(-1), uint64(1), 1.5, int64(1767322800), int64(120000000), 3600, true)
	f.Add("", []byte{}, int64(math.MinInt64), uint64(math.MaxUint64), 5e-324, int64(-62135596800), int64(0), 0, false)
	f.Add("0123456789abcdef\\", []byte("\n"), int64(0), uint64(0), math.Inf(1), int64(253402300799), int64(999999999), -43200, false)
	f.Fuzz(func(t *testing.T, s string, bs []byte, i int64, u uint64, fl float64, sec, nsec int64, zone int, bl bool) {
		tm := time.Unix(sec, nsec).In(time.FixedZone("z", zone%(48*3600)))
		row := []any{s, bs, i, u, fl, tm, bl, nil, changelog.Number(s)}
		back := slices.Clone(row)
		slices.Reverse(back)
		encodeBoth(t, [][]any{row, back, {tm}, {s}})
	})
}

// namedBytes is a type of the caller's own over []byte, which database/sql
// converts to []byte.
type namedBytes []byte
