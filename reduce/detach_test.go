package reduce

import (
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/internal/box"
)

func TestDetachKeepsValuesAndTypes(t *testing.T) {
	at := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	tests := [][]any{
		nil,
		{int64(1), nil, true, at},
		{"", changelog.Number("")},
		{"a", changelog.Number("1.50"), int64(7), "", nil, "ünïcode", []byte("raw"), changelog.Number("-3")},
	}
	for _, row := range tests {
		want := append([]any(nil), row...)
		got := append([]any(nil), row...)
		detach(got)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("detach(%#v) = %#v", want, got)
		}
		for i := range got {
			if reflect.TypeOf(got[i]) != reflect.TypeOf(want[i]) {
				t.Errorf("value %d: type %T, want %T", i, got[i], want[i])
			}
		}
	}
}

// TestBufferedRowsOwnTheirValues checks that what the buffer keeps points
// into memory of its own, not into the decoded record's: a decoder boxes
// string values pointing into the record's text (see package box), and a
// buffered row that kept those would keep the whole record alive until its
// unit is committed.
func TestBufferedRowsOwnTheirValues(t *testing.T) {
	tbl := ordersTable(t)
	// text stands for a decoded record's memory: every string and number
	// value of the images below points into it.
	text := strings.Repeat("-", 64) + "1001 12.50 paid 1002 3.00 open 1003 9.99 new"
	hdrs := make([]string, 0, 16)
	boxed := func(s string, number bool) any {
		i := strings.Index(text, s)
		hdrs = append(hdrs, text[i:i+len(s)])
		if number {
			return box.Number(&hdrs[len(hdrs)-1])
		}
		return box.String(&hdrs[len(hdrs)-1])
	}
	img := func(id, amount, status string) changelog.Row {
		return row("id", boxed(id, true), "amount", boxed(amount, true), "status", boxed(status, false))
	}
	pos := func(seq int64) changelog.Position { return changelog.Position{Partition: "p", Seq: seq} }
	changes := []changelog.Change{
		{Kind: changelog.Insert, After: img("1001", "12.50", "paid"), Pos: pos(1)},
		{Kind: changelog.UpdateAfter, Before: img("1002", "3.00", "open"), After: img("1002", "3.00", "paid"), Pos: pos(2)},
		{Kind: changelog.Delete, Before: img("1003", "9.99", "new"), Pos: pos(3)},
		// A key change: the before image's key becomes a delete.
		{Kind: changelog.UpdateAfter, Before: img("1001", "12.50", "paid"), After: img("1003", "9.99", "paid"), Pos: pos(4)},
	}
	b := NewBuffer("p")
	for i := range changes {
		if err := b.Add(tbl, &changes[i], t0); err != nil {
			t.Fatal(err)
		}
	}
	u := b.Take()
	lo := uintptr(unsafe.Pointer(unsafe.StringData(text)))
	hi := lo + uintptr(len(text))
	var checked int
	check := func(vals []any) {
		for _, v := range vals {
			var s string
			switch x := v.(type) {
			case string:
				s = x
			case changelog.Number:
				s = string(x)
			default:
				continue
			}
			checked++
			if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); p >= lo && p < hi {
				t.Errorf("buffered value %q points into the decoded record", s)
			}
		}
	}
	for _, bt := range u.Batches {
		for _, k := range bt.Deletes {
			check(k)
		}
		for _, g := range bt.Upserts {
			for _, r := range g.Rows {
				check(r)
			}
		}
	}
	if got, want := describe(u), "DELETE orders [1001]; UPSERT orders [1002 3.00 paid]; UPSERT orders [1003 9.99 paid]; PROGRESS p:4"; got != want {
		t.Errorf("unit: %s\nwant  %s", got, want)
	}
	if checked == 0 {
		t.Fatal("no string or number value was checked")
	}
}

// TestRowMemBlocks: rows' memory from a rowMem is 8-byte aligned, never
// overlaps another row's (each is capped at its length), and a row of more
// than rowChunk/8 bytes has a block of its own.
func TestRowMemBlocks(t *testing.T) {
	var m rowMem
	var got [][]byte
	for _, n := range []int{1, 7, 8, 9, 100, rowChunk / 8, rowChunk/8 + 1, 3000, 5, rowChunk} {
		b := m.alloc(n)
		if len(b) != n || cap(b) != n {
			t.Fatalf("alloc(%d): len %d cap %d", n, len(b), cap(b))
		}
		if p := uintptr(unsafe.Pointer(&b[0])); p%8 != 0 {
			t.Fatalf("alloc(%d) at %#x, not 8-byte aligned", n, p)
		}
		for i := range b {
			b[i] = byte(len(got) + 1)
		}
		got = append(got, b)
	}
	for i, b := range got {
		for _, c := range b {
			if c != byte(i+1) {
				t.Fatalf("row %d (%d bytes) overwritten by row %d", i, len(b), c)
			}
		}
	}
	if free := len(m.free); free >= rowChunk {
		t.Fatalf("rows larger than rowChunk/8 were carved from the shared block (%d bytes left)", free)
	}
	var nilMem *rowMem
	if b := nilMem.alloc(16); len(b) != 16 {
		t.Fatalf("nil rowMem: %d bytes", len(b))
	}
}
