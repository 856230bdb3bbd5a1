package coerce

import (
	"unsafe"

	"github.com/txsink/txsink/changelog"
)

// A changelog.Number that a column keeps as text (a canonical decimal, a
// number going into a character column) comes back as a string with the
// same text. Converting that string to an interface would allocate a copy
// of its header, one allocation per value; textOf instead makes an
// interface of type string that points at the Number's own header. A
// Number and a string have the same layout (Number's underlying type is
// string), and a value inside an interface is never written, so the two
// interfaces can share it.
//
// This relies on the layout of an interface without methods: a pointer to
// the dynamic type, then a pointer to the value. It has been the same since
// Go 1.4; the runtime and reflect rely on it, and TestTextOf checks it.

// eface is the layout of an interface value without methods.
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

var stringType = func() unsafe.Pointer {
	var v any = ""
	return (*eface)(unsafe.Pointer(&v)).typ
}()

// textOf returns an interface of type string holding the text of the
// Number v holds, without allocating; anything else v holds is returned as
// the string it holds, or as is when it holds no string.
func textOf(v changelog.Value) any {
	if _, ok := v.(changelog.Number); !ok {
		return v
	}
	e := *(*eface)(unsafe.Pointer(&v))
	e.typ = stringType
	return *(*any)(unsafe.Pointer(&e))
}
