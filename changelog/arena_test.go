package changelog

import (
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestArenaHandsOutSeparateZeroedMemory(t *testing.T) {
	var a Arena
	for round := 0; round < 3; round++ {
		var cs [][]Change
		var vs [][]Value
		var ss [][]string
		var texts []string
		// More than the first slabs hold, so the arena grows mid-round.
		for i := 0; i < 200; i++ {
			c, v, s := a.Changes(1), a.Values(i%7), a.Strings(i%7)
			text := a.Text([]byte(strings.Repeat(string(rune('a'+i%26)), i%300)))
			texts = append(texts, text)
			if len(c) != 1 || len(v) != i%7 || len(s) != i%7 || cap(v) != len(v) || cap(s) != len(s) {
				t.Fatalf("round %d, call %d: lengths %d %d %d, capacities %d %d", round, i, len(c), len(v), len(s), cap(v), cap(s))
			}
			if c[0].Kind != 0 || c[0].TxnID != "" || c[0].After.Values != nil {
				t.Fatalf("round %d, call %d: change not zeroed: %+v", round, i, c[0])
			}
			for j := range v {
				if v[j] != nil || s[j] != "" {
					t.Fatalf("round %d, call %d: value %d not zeroed: %v %q", round, i, j, v[j], s[j])
				}
			}
			c[0].Kind, c[0].TxnID = Insert, "t"
			for j := range v {
				v[j], s[j] = i, "x"
			}
			cs, vs, ss = append(cs, c), append(vs, v), append(ss, s)
		}
		// Nothing handed out in a round overlaps anything else of it.
		for i := range vs {
			if texts[i] != strings.Repeat(string(rune('a'+i%26)), i%300) {
				t.Fatalf("round %d: text %d overwritten: %q", round, i, texts[i])
			}
			if cs[i][0].Kind != Insert {
				t.Fatalf("round %d: change %d overwritten", round, i)
			}
			for j := range vs[i] {
				if vs[i][j] != i || ss[i][j] != "x" {
					t.Fatalf("round %d: values of call %d overwritten: %v", round, i, vs[i])
				}
			}
		}
		a.Reset()
	}
}

func TestArenaResetReusesItsMemory(t *testing.T) {
	var a Arena
	for i := 0; i < 100; i++ {
		a.Values(3)
	}
	a.Reset()
	first := a.Values(3)
	a.Reset()
	again := a.Values(3)
	if unsafe.SliceData(first) != unsafe.SliceData(again) {
		t.Errorf("after Reset the arena handed out new memory, not its own again")
	}
	if allocs := testing.AllocsPerRun(100, func() {
		a.Reset()
		for i := 0; i < 100; i++ {
			a.Changes(1)
			a.Values(3)
			a.Strings(3)
			a.Text([]byte("some text"))
		}
	}); allocs != 0 {
		t.Errorf("a reset arena allocated %.0f times for what it held before, want 0", allocs)
	}
}

func TestNilArenaAllocates(t *testing.T) {
	var a *Arena
	c, v, s := a.Changes(2), a.Values(3), a.Strings(4)
	if len(c) != 2 || len(v) != 3 || len(s) != 4 {
		t.Fatalf("lengths %d %d %d, want 2 3 4", len(c), len(v), len(s))
	}
	if got := a.Text([]byte("abc")); got != "abc" {
		t.Fatalf("Text = %q, want abc", got)
	}
	a.Reset() // does nothing
}

func TestArenaRecentSharesRepeatsAndOutlivesReset(t *testing.T) {
	a := new(Arena)
	id := []byte("txn-7")
	first := a.Recent(id)
	if got := a.Recent(id); unsafe.StringData(got) != unsafe.StringData(first) {
		t.Error("a repeated id got a string of its own")
	}
	a.Text([]byte("filler"))
	a.Reset()
	a.Text([]byte("overwrites the text slab"))
	id[0] = 'X' // the caller's bytes are its own
	if first != "txn-7" || a.Recent([]byte("txn-7")) != "txn-7" {
		t.Errorf("after Reset: %q", first)
	}
	if n := testing.AllocsPerRun(100, func() { a.Recent([]byte("txn-7")) }); n != 0 {
		t.Errorf("a repeat allocates %v times", n)
	}
	var nilArena *Arena
	if got := nilArena.Recent([]byte("x")); got != "x" {
		t.Errorf("nil arena: %q", got)
	}
}

// TestArenaRecentCarvesDistinctIDs: the ids of transactions one after
// another are carved from shared heap blocks, each keeping its text
// through Resets and the blocks that follow, and an id too long for a
// block's share is a string of its own.
func TestArenaRecentCarvesDistinctIDs(t *testing.T) {
	a := new(Arena)
	var ids []string
	for i := range 1000 {
		ids = append(ids, a.Recent([]byte("t"+strconv.Itoa(i))))
		if i%7 == 0 {
			a.Reset()
		}
	}
	long := strings.Repeat("x", maxHeapString+1)
	if got := a.Recent([]byte(long)); got != long {
		t.Errorf("a long id: %q", got)
	}
	for i, id := range ids {
		if id != "t"+strconv.Itoa(i) {
			t.Fatalf("id %d is %q", i, id)
		}
	}
	if allocs := testing.AllocsPerRun(1, func() {
		for n := range 10000 {
			a.Recent([]byte{'u', byte('0' + n%10), byte('0' + n/10%10), byte('0' + n/100%10)})
		}
	}); allocs > 10000/(heapBlock/4)+1 {
		t.Errorf("10000 ids allocate %v times, want one per block of %d bytes", allocs, heapBlock)
	}
	if got := a.Recent(nil); got != "" {
		t.Errorf("an empty id: %q", got)
	}
}

// TestArenaBytes: Bytes counts every slab handed out of since the last
// Reset, the ones grown past included, and after Reset the slabs kept.
func TestArenaBytes(t *testing.T) {
	var a Arena
	if a.Bytes() != 0 || (*Arena)(nil).Bytes() != 0 {
		t.Fatalf("an empty arena holds %d bytes", a.Bytes())
	}
	change := int(unsafe.Sizeof(Change{}))
	a.Changes(1)
	if got, want := a.Bytes(), minArenaChanges*change; got != want {
		t.Fatalf("after one change: %d bytes, want the first slab's %d", got, want)
	}
	a.Changes(minArenaChanges) // past the first slab: a second, twice as large
	grownTo := 3 * minArenaChanges * change
	if got := a.Bytes(); got != grownTo {
		t.Fatalf("after growing: %d bytes, want both slabs' %d", got, grownTo)
	}
	a.Text([]byte("abc"))
	if got := a.Bytes(); got != grownTo+minArenaText {
		t.Fatalf("after text: %d bytes, want %d", got, grownTo+minArenaText)
	}
	a.Reset()
	if got, want := a.Bytes(), 2*minArenaChanges*change+minArenaText; got != want {
		t.Fatalf("after Reset: %d bytes, want the kept slabs' %d", got, want)
	}
}

// TestMemBytes: a change's estimate grows with its values' text and
// counts both images.
func TestMemBytes(t *testing.T) {
	empty := (&Change{}).MemBytes()
	if empty != int(unsafe.Sizeof(Change{})) {
		t.Errorf("an empty change: %d bytes, want the Change's %d", empty, unsafe.Sizeof(Change{}))
	}
	short := Change{Kind: Insert, After: RowOf("id", Number("1"), "name", "a")}
	long := Change{Kind: Insert, After: RowOf("id", Number("1"), "name", strings.Repeat("a", 1000))}
	both := Change{Kind: UpdateAfter, Before: short.After, After: short.After}
	if d := long.MemBytes() - short.MemBytes(); d != 999 {
		t.Errorf("999 more bytes of text add %d", d)
	}
	if d := both.MemBytes() - short.MemBytes(); d != short.MemBytes()-empty {
		t.Errorf("a before image adds %d, want the after image's %d", d, short.MemBytes()-empty)
	}
}

// TestChangeSize guards the size of a Change, which every decoded record
// pays in its arena: Order is a pointer, set only by decoders told to read
// places (format.OrderReader), so that the others pay nothing for it.
func TestChangeSize(t *testing.T) {
	if got, want := unsafe.Sizeof(Change{}), uintptr(224); got > want {
		t.Errorf("Change is %d bytes, want at most %d", got, want)
	}
}

// TestArenaOrder checks that an arena's places are zeroed and apart, and
// that a nil arena's are on the heap.
func TestArenaOrder(t *testing.T) {
	var a Arena
	for round := 0; round < 2; round++ {
		var got []*Order
		for i := range 200 {
			o := a.Order()
			if !o.IsZero() {
				t.Fatalf("round %d: place %d not zero: %+v", round, i, *o)
			}
			o.Log, o.N = "l", uint32(i)
			got = append(got, o)
		}
		for i, o := range got {
			if o.N != uint32(i) {
				t.Fatalf("round %d: place %d overwritten: %+v", round, i, *o)
			}
		}
		a.Reset()
	}
	var nilArena *Arena
	if o := nilArena.Order(); o == nil || !o.IsZero() {
		t.Errorf("nil arena's Order = %v", o)
	}
}
