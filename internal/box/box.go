// Package box makes interface values holding strings (and int64 values and
// times) without allocating a copy of each value.
//
// Converting a string to an interface allocates a copy of its header (16
// bytes) for the interface to point to: one allocation per string value of
// a row, most of a row's allocations. A caller that lays the headers of
// many values side by side in one slice can instead make each interface
// point into that slice: one allocation for all of them.
//
// This relies on the layout of an interface without methods: a pointer to
// the dynamic type and a pointer to the value. It has been the same since
// Go 1.4; the runtime, reflect and encoding libraries rely on it, and
// TestBoxes checks it. The caller writes a header before boxing it and
// never after, so each interface holds an immutable value, as one made by
// a conversion does. The interior pointers keep the whole slice alive
// (and the bytes its headers point to), which the collector handles as it
// handles any interior pointer; a caller that keeps a few such values long
// should copy them out of a large slice (as reduce does).
package box

import (
	"time"
	"unsafe"

	"github.com/txsink/txsink/changelog"
)

// eface is the layout of an interface value without methods.
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

// The dynamic types this package boxes.
var (
	stringType = typeOf("")
	numberType = typeOf(changelog.Number(""))
)

func typeOf(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

// String returns an interface holding *p as a string, without copying *p.
// *p must never be written again.
func String(p *string) any { return at(stringType, p) }

// Number returns an interface holding *p as a changelog.Number, without
// copying *p. *p must never be written again.
func Number(p *string) any { return at(numberType, p) }

func at(typ unsafe.Pointer, p *string) (v any) {
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = typ, unsafe.Pointer(p)
	return v
}

// Int64 returns an interface holding *p as an int64, without copying *p
// (converting an int64 above 255 to an interface allocates 8 bytes). *p
// must never be written again.
func Int64(p *int64) any { return atPtr(int64Type, unsafe.Pointer(p)) }

// Time returns an interface holding *p as a time.Time, without copying *p.
// *p must never be written again.
func Time(p *time.Time) any { return atPtr(timeType, unsafe.Pointer(p)) }

var (
	int64Type = typeOf(int64(0))
	timeType  = typeOf(time.Time{})
)

func atPtr(typ, p unsafe.Pointer) (v any) {
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = typ, p
	return v
}
