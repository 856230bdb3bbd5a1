package changelog

import "unsafe"

// Arena is memory for decoded changes that is used again once whoever
// consumed them is done with them: changes, row values, the string
// headers values are boxed in (see the box package of txsink's
// internals) and the text of the strings.
//
// A decoder allocating every change on the heap left most of txsink's
// allocated bytes to the collector (the insert-only bench: two thirds of
// what decoding and reduction allocate), though each change lives only
// until it is buffered, where every value it holds is copied. An arena
// hands the same memory out again for the next batch of records instead.
//
// The rule that makes it safe: after Reset, nothing handed out before it
// may be read, because it is handed out again and overwritten. So a
// consumer resets an arena only once it holds nothing of it: it copied
// what it keeps (the per-key buffer does: reduce detaches every string
// and number), or it is done with the changes (the engine's transaction
// loop holds each arena until the source transactions of its changes have
// ended, each reduced as it ends). A consumer that cannot tell must give the decoder no
// arena, and so have the changes on the heap.
//
// The methods of a nil *Arena allocate on the heap, so a decoder takes an
// arena without caring whether it got one. An Arena is not safe for
// concurrent use; a decoding goroutine uses it, then hands it (through a
// channel or a lock) to the goroutine that consumes and resets it.
type Arena struct {
	changes []Change
	values  []Value
	strs    []string
	text    []byte
	orders  []Order
	// recent is the string Recent made last. It is on the heap, so it
	// outlives Reset and serves the arena's next batches too.
	recent string
	// heap is the block Recent carves its strings from: heap memory
	// that is never written again where a string was carved (Reset
	// leaves it alone), so each string lives as long as whoever holds
	// it, as a string of its own would.
	heap []byte
	// bytes is the memory of the slabs handed out since the last Reset,
	// those grown past included (see Bytes).
	bytes int
}

// Slab sizes an arena starts with: about one decode batch of narrow rows.
const (
	minArenaChanges = 64
	minArenaValues  = 512
	minArenaText    = 32 << 10
)

// Changes returns n zeroed changes.
func (a *Arena) Changes(n int) []Change {
	if a == nil {
		return make([]Change, n)
	}
	a.changes = grown(a.changes, n, minArenaChanges, &a.bytes)
	return take(&a.changes, n)
}

// Values returns n nil values.
func (a *Arena) Values(n int) []Value {
	if a == nil {
		return make([]Value, n)
	}
	a.values = grown(a.values, n, minArenaValues, &a.bytes)
	return take(&a.values, n)
}

// Strings returns n empty strings, room for the headers of boxed values.
func (a *Arena) Strings(n int) []string {
	if a == nil {
		return make([]string, n)
	}
	a.strs = grown(a.strs, n, minArenaValues, &a.bytes)
	return take(&a.strs, n)
}

// Order returns a zero Order, for a change's Order: only decoders told
// to read places (format.OrderReader) take them, so the changes of the
// others stay as small as they were.
func (a *Arena) Order() *Order {
	if a == nil {
		return new(Order)
	}
	a.orders = grown(a.orders, 1, minArenaChanges, &a.bytes)
	return &take(&a.orders, 1)[0]
}

// Text returns a string holding a copy of b. Unlike other strings, it
// changes after Reset: its bytes are handed out again.
func (a *Arena) Text(b []byte) string {
	if a == nil {
		return string(b)
	}
	if len(b) == 0 {
		return ""
	}
	a.text = grown(a.text, len(b), minArenaText, &a.bytes)
	c := take(&a.text, len(b))
	copy(c, b)
	return unsafe.String(&c[0], len(c))
}

// Recent returns a string holding a copy of b, on the heap: the very
// string of the previous call when b repeats it, so that the events of
// one source transaction share its id instead of allocating it each, and
// else carved from a heap block shared with the strings of the calls
// before, so that a transaction's id seldom costs an allocation either.
// Unlike Text's strings, it stays valid after Reset, for as long as it is
// held (a transaction's id outlives its arena: the engine remembers the
// ids of transactions lately ended). A nil arena's Recent allocates
// every time.
func (a *Arena) Recent(b []byte) string {
	if a == nil {
		return string(b)
	}
	if a.recent != string(b) {
		a.recent = a.heapString(b)
	}
	return a.recent
}

// Sizes of the heap blocks Recent carves strings from: a block holds
// the ids of dozens of transactions, which then cost an allocation
// together instead of one each; a string too long for a block's share
// is allocated alone.
const (
	heapBlock     = 512
	maxHeapString = heapBlock / 8
)

// heapString returns a copy of b in memory no one writes again.
func (a *Arena) heapString(b []byte) string {
	if len(b) == 0 || len(b) > maxHeapString {
		return string(b)
	}
	if cap(a.heap)-len(a.heap) < len(b) {
		// The full block stays alive as long as a string in it does.
		a.heap = make([]byte, 0, heapBlock)
	}
	n := len(a.heap)
	a.heap = append(a.heap, b...)
	return unsafe.String(&a.heap[n], len(b))
}

// Reset makes the arena's memory free to be handed out again, and drops
// what it points to so that the collector can free that. Everything
// handed out before may be overwritten from then on. A nil arena's Reset
// does nothing.
func (a *Arena) Reset() {
	if a == nil {
		return
	}
	clear(a.changes)
	clear(a.values)
	clear(a.strs)
	clear(a.orders)
	a.changes, a.values, a.strs, a.text, a.orders = a.changes[:0], a.values[:0], a.strs[:0], a.text[:0], a.orders[:0]
	// The slabs grown past are the collector's now; the last ones stay.
	a.bytes = slabBytes(a.changes) + slabBytes(a.values) + slabBytes(a.strs) + slabBytes(a.text) + slabBytes(a.orders)
}

// Bytes returns the memory of the slabs the arena has handed out of
// since its last Reset (or since it was made): its slabs, and the
// smaller ones it grew past, which what was handed out of them keeps
// alive. It is what holding the arena's changes costs, room not yet
// handed out included, which is most of an arena whose batch was
// small; a nil arena's is 0.
func (a *Arena) Bytes() int {
	if a == nil {
		return 0
	}
	return a.bytes
}

// slabBytes is the memory of the slab s is in.
func slabBytes[T any](s []T) int {
	var zero T
	return cap(s) * int(unsafe.Sizeof(zero))
}

// grown returns s with room for n more elements: s itself, or a new slab
// twice as large (at least min) when s is full, whose memory it adds to
// *bytes. What was handed out of the
// old slab stays where it is, valid until Reset; the old slab is the
// collector's once its last slice is.
func grown[T any](s []T, n, min int, bytes *int) []T {
	if len(s)+n <= cap(s) {
		return s
	}
	g := make([]T, 0, max(2*cap(s), n, min))
	*bytes += slabBytes(g)
	return g
}

// take hands out the next n elements of *s, capped so that appending to
// them cannot reach the next ones.
func take[T any](s *[]T, n int) []T {
	l := len(*s)
	*s = (*s)[:l+n]
	return (*s)[l : l+n : l+n]
}
