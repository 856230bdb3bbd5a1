package jsonscan

import (
	"unsafe"

	"github.com/txsink/txsink/changelog"
)

// Converting a string to an interface allocates a copy of its header (16
// bytes) for the interface to point to: one allocation per string and
// number value of a row, most of a row's allocations. Row instead puts the
// headers of a row's values side by side in one slice and makes each
// interface point into it, which takes one allocation per row.
//
// This relies on the layout of an interface without methods: a pointer to
// the dynamic type and a pointer to the value. It has been the same since
// Go 1.4; the runtime, reflect and encoding libraries rely on it, and
// TestBoxAt checks it. The headers are written before the interfaces are
// made and never after, so each interface holds an immutable value, as one
// made by a conversion does; the interior pointers keep the whole slice
// alive, which the GC handles as it handles any interior pointer.

// eface is the layout of an interface value without methods.
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

// The dynamic types Row boxes.
var (
	stringType = typeOf("")
	numberType = typeOf(changelog.Number(""))
)

func typeOf(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

// boxAt returns an interface holding *p with dynamic type typ (stringType
// or numberType), without copying *p. *p must never be written again.
func boxAt(typ unsafe.Pointer, p *string) (v any) {
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = typ, unsafe.Pointer(p)
	return v
}
