package reduce

import (
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/internal/box"
	"github.com/txsink/txsink/schema"
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

// TestKeptRowMatchesDetach: a row convertRow converts to keep, its
// values written straight into the buffer's row memory, is the row
// detach makes of the same values, of the same types, with the size
// rowBytes gives it, for every kind of value a conversion returns, with
// the block empty, nearly full or roomy; a row too large for a shared
// block gets memory of its own, and a refused row gives back what it took.
func TestKeptRowMatchesDetach(t *testing.T) {
	st := &schema.Table{Namespace: "test", Name: "kinds", PrimaryKey: []string{"id"}, Columns: []schema.Column{
		{Name: "id", Class: schema.Int, Bits: 64},
		{Name: "u", Class: schema.Uint, Bits: 64, Nullable: true},
		{Name: "s", Class: schema.String, Nullable: true},
		{Name: "d", Class: schema.Decimal, Precision: 10, Scale: 2, Nullable: true},
		{Name: "f", Class: schema.Float, Bits: 64, Nullable: true},
		{Name: "b", Class: schema.Bool, Nullable: true},
		{Name: "raw", Class: schema.Bytes, Nullable: true},
		{Name: "day", Class: schema.Date, Nullable: true},
		{Name: "at", Class: schema.DateTime, FracDigits: 3, Nullable: true},
		{Name: "ts", Class: schema.Timestamp, FracDigits: 6, Nullable: true},
		{Name: "j", Class: schema.JSON, Nullable: true},
		{Name: "nn", Class: schema.String, Nullable: false},
	}}
	tbl, err := NewTable(st, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	long := strings.Repeat("x", 2*rowChunk/8)
	tests := []changelog.Row{
		row("id", changelog.Number("7"), "nn", "a"),
		row("id", changelog.Number("1234567"), "u", changelog.Number("18446744073709551615"), "s", "ünï", "d", changelog.Number("1.5"),
			"f", changelog.Number("2.5"), "b", true, "raw", []byte("xy"), "day", "2026-11-30", "at", "2026-11-30 08:00:00.125",
			"ts", "2026-11-30T08:00:00+02:00", "j", changelog.JSON(`{"a":1}`), "nn", changelog.Number("12")),
		row("id", "-5", "s", "", "d", "0.50", "at", changelog.Number("1764489600000"), "ts", at, "u", nil, "j", nil, "nn", ""),
		row("id", int64(99999), "ts", at.In(time.FixedZone("x", 3600)), "s", changelog.Number("12"), "nn", "b"),
		row("id", changelog.Number("8"), "s", long, "nn", "c"),
	}
	// The rooms keep the front 8-byte aligned, as blocks and front do.
	for _, room := range []int{-1, 0, 40, 104, rowChunk} {
		for i, img := range tests {
			b := NewBuffer("p")
			if room >= 0 {
				b.rowMem.free = make([]byte, rowChunk)[rowChunk-room:]
			}
			c := &changelog.Change{Kind: changelog.Insert, After: img}
			_, conv, _, err := b.convertRow(tbl, c, img, "after", false)
			if err != nil {
				t.Fatalf("row %d: %v", i, err)
			}
			want := append([]any(nil), conv...)
			wantSize := detach(want)
			shared := b.rowMem.free
			_, got, size, err := b.convertRow(tbl, c, img, "after", true)
			if err != nil {
				t.Fatalf("row %d: %v", i, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("room %d, row %d: kept %#v, want %#v", room, i, got, want)
			}
			for k := range got {
				if reflect.TypeOf(got[k]) != reflect.TypeOf(want[k]) {
					t.Errorf("room %d, row %d value %d: type %T, want %T", room, i, k, got[k], want[k])
				}
			}
			if size != wantSize || size != rowBytes(got) {
				t.Errorf("room %d, row %d: size %d, detach's %d, rowBytes %d", room, i, size, wantSize, rowBytes(got))
			}
			if cap(got) != len(got) {
				t.Errorf("room %d, row %d: capacity %d, length %d", room, i, cap(got), len(got))
			}
			for _, v := range got {
				if s, _ := v.(string); s == long && len(shared) > 0 {
					lo := uintptr(unsafe.Pointer(unsafe.SliceData(shared)))
					if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); p >= lo && p < lo+uintptr(len(shared)) {
						t.Errorf("room %d: a row of %d bytes was written into the shared block", room, size)
					}
				}
			}
		}
		// A refused row (nn is NOT NULL) leaves the memory as it was.
		b := NewBuffer("p")
		if room >= 0 {
			b.rowMem.free = make([]byte, rowChunk)[rowChunk-room:]
		}
		mem, slots := len(b.rowMem.free), len(b.rowSlots.free)
		img := row("id", changelog.Number("9"), "s", "abc", "at", "2026-11-30 08:00:00", "nn", nil)
		if _, _, _, err := b.convertRow(tbl, &changelog.Change{Kind: changelog.Insert, After: img}, img, "after", true); err == nil {
			t.Fatal("a NULL in a NOT NULL column was accepted")
		}
		if len(b.rowMem.free) != mem || len(b.rowSlots.free) != slots {
			t.Errorf("room %d: a refused row took %d bytes and %d slots", room, mem-len(b.rowMem.free), slots-len(b.rowSlots.free))
		}
	}
}
