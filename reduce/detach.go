package reduce

import (
	"encoding/binary"
	"time"
	"unsafe"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/internal/box"
)

// detach copies the string, number, int64 and time values of row into
// memory of the row's own: one allocation holding the strings' headers,
// the integers, the times and the strings' bytes. It
// returns the bytes the row then holds (see rowBytes).
//
// A decoder may box a value pointing into the memory of the whole decoded
// record (see package box): its text, its before image, every value's
// header. A buffered row holding such a value keeps all of it alive until
// its unit is committed, about three times the row itself. For the
// bench's update workloads that was half of the live heap, and the
// collector's work, which grows with the live heap, took a quarter more
// CPU than with rows of their own.
//
// The headers and the bytes share one block of memory the collector does
// not scan (a []byte), with the row's int64 values and its times in UTC:
// each header points into that same block, and each of the row's values
// points into it, which keeps the whole block alive; so no pointer the
// collector must follow is hidden from it. One allocation per row instead
// of one for the headers, one for the bytes and one per integer above 255
// and per time.
func detach(row []any) int { return detachIn(nil, row) }

// rowChunk is the size of the blocks rowMem carves rows' memory from.
const rowChunk = 8192

// rowMem hands out the memory of a buffer's rows from shared blocks of
// rowChunk bytes: one allocation per block instead of one per row (a
// bench row takes 100 to 200 bytes: about one allocation per 50 rows). A
// block stays alive while any row carved from it does; a buffer's rows
// all live until their unit is committed, so that keeps at most the
// unused end of one block, and the rows of two units sharing a block.
// Rows of more than rowChunk/8 bytes get a block of their own, so that
// no large row is kept alive by, or keeps alive, many small ones.
//
// block is the current block and block[lo:hi] its unused part. alloc
// and front take from its front, in multiples of 8 bytes, so that it
// stays 8-byte aligned; text (see place) takes strings' bytes from its
// back. The part is kept as two offsets, not a slice, so that taking
// from it writes no pointer (no write barrier): block changes only with
// a new block.
type rowMem struct {
	block  []byte
	lo, hi int
}

// room is the size of m's unused part.
func (m *rowMem) room() int { return m.hi - m.lo }

// alloc returns n bytes, 8-byte aligned (as detach's headers, integers
// and times must be), from m's current block, or from a new one; with m
// nil, from an allocation of their own.
func (m *rowMem) alloc(n int) []byte {
	if m == nil || n > rowChunk/8 {
		return make([]byte, n)
	}
	n8 := (n + 7) &^ 7
	if m.hi-m.lo < n8 {
		m.block, m.lo, m.hi = make([]byte, rowChunk), 0, rowChunk
	}
	block := m.block[m.lo : m.lo+n : m.lo+n]
	m.lo += n8
	return block
}

// rowSlotsChunk is the number of values the blocks rowSlots carves rows'
// []any from hold (8 KiB).
const rowSlotsChunk = 512

// rowSlots hands out the []any of a buffer's rows from shared blocks of
// rowSlotsChunk values, as rowMem does their values' memory: one
// allocation per block instead of one per row. The lifetimes are
// rowMem's: a buffer's rows all live until their unit is committed (the
// sinks read them, and copy a row they change), so a block keeps at most
// its unused end and the rows of two units alive. Each row is capped at
// its own length, so an append to one (the sinks append to copies only)
// could never write into the next. Rows of more than rowSlotsChunk/8
// values get a slice of their own. block[at:] is the current block's
// unused part (an offset, as rowMem's: no pointer written per row).
type rowSlots struct {
	block []any
	at    int
}

// room is the number of values left in m's block.
func (m *rowSlots) room() int { return len(m.block) - m.at }

// alloc returns a []any of n values, length and capacity n.
func (m *rowSlots) alloc(n int) []any {
	if n > rowSlotsChunk/8 {
		return make([]any, n)
	}
	if len(m.block)-m.at < n {
		m.block, m.at = make([]any, rowSlotsChunk), 0
	}
	row := m.block[m.at : m.at+n : m.at+n]
	m.at += n
	return row
}

// keepAny returns vals (a key of keyValues, a merged row) as the buffer
// keeps them: copied into a []any of rowSlots and detached into rowMem
// (see detachIn), with the bytes they hold.
func (b *Buffer) keepAny(vals []any) ([]any, int) {
	kept := b.rowSlots.alloc(len(vals))
	copy(kept, vals)
	return kept, detachIn(&b.rowMem, kept)
}

// front returns n bytes (a multiple of 8, so the front stays 8-byte
// aligned) from the front of m's block for a value of a row being
// converted, *placed counting what the row took so far; nil when the
// block has no room left or the row would outgrow a shared block's share
// (rowChunk/8, see rowMem): the row then goes to detachIn.
func (m *rowMem) front(n int, placed *int) unsafe.Pointer {
	if m.hi-m.lo < n || *placed+n > rowChunk/8 {
		return nil
	}
	// n > 0 bytes are left: m.block is a block, lo within it.
	at := unsafe.Add(unsafe.Pointer(unsafe.SliceData(m.block)), m.lo)
	m.lo += n
	*placed += n
	return at
}

// place writes value k of row, a value convertRow converted, into m's
// block, as detachIn would: a string's or Number's header at the front and
// its text at the back (text needs no alignment, so rows leave no gaps),
// an int64 or a time in UTC at the front; other values need nothing. It
// reports false, having written nothing, when the block (or the row's
// share) has no room for it.
func (m *rowMem) place(row []any, k int, placed *int) bool {
	switch x := row[k].(type) {
	case string:
		h := m.text(x, placed)
		if h == nil {
			return false
		}
		row[k] = box.String(h)
	case changelog.Number:
		h := m.text(string(x), placed)
		if h == nil {
			return false
		}
		row[k] = box.Number(h)
	case int64:
		at := m.front(8, placed)
		if at == nil {
			return false
		}
		*(*int64)(at) = x
		row[k] = box.Int64((*int64)(at))
	case time.Time:
		if ownable(x) {
			at := m.front(timeBytes, placed)
			if at == nil {
				return false
			}
			*(*time.Time)(at) = x
			row[k] = box.Time((*time.Time)(at))
		}
	}
	return true
}

// text copies s into m's block (see place) and returns its header there,
// nil when there is no room.
func (m *rowMem) text(s string, placed *int) *string {
	need := headerBytes + len(s)
	if m.hi-m.lo < need || *placed+need > rowChunk/8 {
		return nil
	}
	// At least a header's bytes are left: m.block is a block, lo and
	// tail within it.
	base := unsafe.Pointer(unsafe.SliceData(m.block))
	h := (*string)(unsafe.Add(base, m.lo))
	tail := m.hi - len(s)
	if len(s) == 0 {
		*h = ""
	} else {
		// Most values are short (a bench row's texts are 3 to 10 bytes):
		// one of 4 to 16 bytes is copied as two words (or two halves of
		// one) that overlap as needed, a load and a store each, instead
		// of memmove's call, which costs about as much again as the copy.
		t := unsafe.Slice((*byte)(unsafe.Add(base, tail)), len(s))
		switch n := len(s); {
		case n >= 8 && n <= 16:
			binary.LittleEndian.PutUint64(t, word64(s))
			binary.LittleEndian.PutUint64(t[n-8:], word64(s[n-8:]))
		case n >= 4 && n < 8:
			binary.LittleEndian.PutUint32(t, word32(s))
			binary.LittleEndian.PutUint32(t[n-4:], word32(s[n-4:]))
		default:
			copy(t, s)
		}
		*h = unsafe.String(unsafe.SliceData(t), len(s))
	}
	m.lo, m.hi = m.lo+headerBytes, tail
	*placed += need
	return h
}

// word64 returns the first 8 bytes of s, which has at least 8, as a
// little-endian integer (one load).
func word64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// word32 returns the first 4 bytes of s, which has at least 4, as a
// little-endian integer (one load).
func word32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// detachIn is detach with the row's memory from mem (see rowMem): for the
// rows a buffer keeps until their unit's commit.
func detachIn(mem *rowMem, row []any) int {
	n, size, ints, times := 0, 0, 0, 0
	for _, v := range row {
		switch x := v.(type) {
		case string:
			n++
			size += len(x)
		case changelog.Number:
			n++
			size += len(x)
		case int64:
			ints++
		case time.Time:
			if ownable(x) {
				times++
			}
		}
	}
	if n+ints+times == 0 {
		return rowBytes(row)
	}
	// Each value's bytes are copied once, before its header is made, and
	// never written again: the strings are as immutable as any other. A
	// []byte of 16 bytes or more is at least 8-byte aligned, as a header,
	// an int64 and a time.Time must be; the headers, then the integers,
	// then the times keep that alignment, and the text follows them.
	hdrs, is, ts, text := carve(mem, n, ints, times, size)
	at, j, ji, jt := 0, 0, 0, 0
	for k, v := range row {
		switch x := v.(type) {
		case string:
			hdrs[j] = own(text, &at, x)
			row[k] = box.String(&hdrs[j])
			j++
		case changelog.Number:
			hdrs[j] = own(text, &at, string(x))
			row[k] = box.Number(&hdrs[j])
			j++
		case int64:
			is[ji] = x
			row[k] = box.Int64(&is[ji])
			ji++
		case time.Time:
			if ownable(x) {
				ts[jt] = x
				row[k] = box.Time(&ts[jt])
				jt++
			}
		}
	}
	return rowBytes(row)
}

// carve returns a row's block from mem (see rowMem.alloc), laid out as
// the headers of strs strings, ints integers, times times and size bytes
// of text.
func carve(mem *rowMem, strs, ints, times, size int) (hdrs []string, is []int64, ts []time.Time, text []byte) {
	block := mem.alloc(headerBytes*strs + 8*ints + timeBytes*times + size)
	hdrs = slab[string](block, 0, strs)
	is = slab[int64](block, headerBytes*strs, ints)
	ts = slab[time.Time](block, headerBytes*strs+8*ints, times)
	text = block[headerBytes*strs+8*ints+timeBytes*times:]
	return hdrs, is, ts, text
}

// ownable reports whether t may be kept in memory the collector does not
// scan: a time in UTC, whose location is nil or the global UTC, so it
// points at nothing on the heap. Times in another location keep their own
// box.
func ownable(t time.Time) bool { return t.Location() == time.UTC }

// slab returns the n values of type T at offset at of block (nil for
// none: a pointer to the block's end would point past its memory).
func slab[T any](block []byte, at, n int) []T {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&block[at])), n)
}

// timeBytes is the size of a time.Time.
const timeBytes = int(unsafe.Sizeof(time.Time{}))

// headerBytes is the size of a string's header.
const headerBytes = int(unsafe.Sizeof(""))

// rowBytes is what row takes in memory once detached: its slice of
// values, the strings' bytes and headers, and the memory each other
// boxed value points to. It leaves out the allocator's rounding, a few
// percent; it is meant to bound a buffer's memory (max-bytes), not to
// account for every byte.
func rowBytes(row []any) int {
	n := 16 * cap(row) // an interface is two words
	for _, v := range row {
		n += valueBytes(v)
	}
	return n
}

// valueBytes is what rowBytes counts for value v beside its interface.
func valueBytes(v any) int {
	switch x := v.(type) {
	case nil, bool:
		// Boxed without memory of their own.
		return 0
	case string:
		return 16 + len(x)
	case changelog.Number:
		return 16 + len(x)
	case []byte:
		return 24 + cap(x)
	case time.Time:
		return timeBytes
	case int64, uint64, float64, int, uint, int32, uint32, float32:
		return 8
	}
	// A type no converter of this module makes today: count it as a
	// small struct rather than nothing.
	return 32
}

// own copies s into text at *at, advances *at past it, and returns the
// copy.
func own(text []byte, at *int, s string) string {
	if len(s) == 0 {
		return ""
	}
	c := text[*at : *at+len(s)]
	copy(c, s)
	*at += len(s)
	return unsafe.String(&c[0], len(c))
}
