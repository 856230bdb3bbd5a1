package mysql

import (
	"io"
	"testing"
	"time"
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
