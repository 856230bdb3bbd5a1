package reduce

import (
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
type rowMem struct{ free []byte }

// alloc returns n bytes, 8-byte aligned (as detach's headers, integers
// and times must be), from m's current block, or from a new one; with m
// nil, from an allocation of their own.
func (m *rowMem) alloc(n int) []byte {
	if m == nil || n > rowChunk/8 {
		return make([]byte, n)
	}
	n8 := (n + 7) &^ 7
	if len(m.free) < n8 {
		m.free = make([]byte, rowChunk)
	}
	block := m.free[:n:n]
	m.free = m.free[n8:]
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
// values get a slice of their own.
type rowSlots struct{ free []any }

// alloc returns a []any of n values, length and capacity n.
func (m *rowSlots) alloc(n int) []any {
	if n > rowSlotsChunk/8 {
		return make([]any, n)
	}
	if len(m.free) < n {
		m.free = make([]any, rowSlotsChunk)
	}
	row := m.free[:n:n]
	m.free = m.free[n:]
	return row
}

// keep returns row, converted by convertRow into the buffer's scratch
// row, as the buffer keeps it: in a []any of its own carved from
// rowSlots, its values detached into rowMem as detachIn does, with the
// bytes it then holds (see rowBytes). convertRow noted each value's kind
// and the memory they take (see conversion): the row is copied and
// detached in one pass, without a type switch per value. A row it did
// not convert (one merged from two images) takes detachIn's way.
func (b *Buffer) keep(row []any) ([]any, int) {
	cv := &b.conv
	if len(row) == 0 || len(row) != len(cv.kinds) || &row[0] != &b.row[0] {
		return b.keepAny(row)
	}
	kept := b.rowSlots.alloc(len(row))
	size := 16*len(row) + cv.bytes
	if cv.strs+cv.ints+cv.times == 0 {
		copy(kept, row)
		return kept, size
	}
	hdrs, is, ts, text := carve(&b.rowMem, cv.strs, cv.ints, cv.times, cv.text)
	at, j, ji, jt := 0, 0, 0, 0
	for k, kind := range cv.kinds {
		switch kind {
		case kindString:
			hdrs[j] = own(text, &at, row[k].(string))
			kept[k] = box.String(&hdrs[j])
			j++
		case kindNumber:
			hdrs[j] = own(text, &at, string(row[k].(changelog.Number)))
			kept[k] = box.Number(&hdrs[j])
			j++
		case kindInt:
			is[ji] = row[k].(int64)
			kept[k] = box.Int64(&is[ji])
			ji++
		case kindTime:
			ts[jt] = row[k].(time.Time)
			kept[k] = box.Time(&ts[jt])
			jt++
		default:
			kept[k] = row[k]
		}
	}
	return kept, size
}

// keepAny is keep for values convertRow did not convert (a key of
// keyValues): copied into a []any of rowSlots and detached by detachIn.
func (b *Buffer) keepAny(vals []any) ([]any, int) {
	kept := b.rowSlots.alloc(len(vals))
	copy(kept, vals)
	return kept, detachIn(&b.rowMem, kept)
}

// valueKind is what keep does with a converted value (see conversion).
type valueKind uint8

// The value kinds: copied as a string's or a Number's text, as an int64,
// as a time in UTC, or kept as it is (nil, bool, []byte, a float, a time
// elsewhere than in UTC).
const (
	kindOther valueKind = iota
	kindString
	kindNumber
	kindInt
	kindTime
)

// conversion describes the scratch row convertRow made, for keep: each
// value's kind, how many strings (and Numbers), integers and times in UTC
// it holds, their text's length, and what its values take in memory as
// rowBytes counts it, beside the []any.
type conversion struct {
	kinds                   []valueKind
	strs, ints, times, text int
	bytes                   int
}

// reset starts the description of a row of n values.
func (cv *conversion) reset(n int) {
	if cap(cv.kinds) < n {
		cv.kinds = make([]valueKind, n)
	}
	cv.kinds = cv.kinds[:n]
	cv.strs, cv.ints, cv.times, cv.text, cv.bytes = 0, 0, 0, 0, 0
}

// note records v as value k of the row. The sizes are rowBytes' (see
// valueBytes), inline for the kinds keep copies.
func (cv *conversion) note(k int, v any) {
	kind := kindOther
	switch x := v.(type) {
	case string:
		kind = kindString
		cv.strs++
		cv.text += len(x)
		cv.bytes += headerBytes + len(x)
	case changelog.Number:
		kind = kindNumber
		cv.strs++
		cv.text += len(x)
		cv.bytes += headerBytes + len(x)
	case int64:
		kind = kindInt
		cv.ints++
		cv.bytes += 8
	case time.Time:
		if ownable(x) {
			kind = kindTime
			cv.times++
		}
		cv.bytes += timeBytes
	default:
		cv.bytes += valueBytes(v)
	}
	cv.kinds[k] = kind
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
