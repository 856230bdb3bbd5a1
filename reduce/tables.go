package reduce

import (
	"unsafe"

	"github.com/txsink/txsink/changelog"
)

// Tables maps source tables to the Tables their changes go to, for a loop
// that looks up every change's (the engine's): a map, in front of which
// the tables found last are told by their names' addresses. Decoders
// intern table names (jsonrecord.Tables, GoldenGate's last table), so
// the changes of one table carry the very strings the map was first
// given, and comparing four words finds them without hashing two strings
// and comparing their bytes; a change whose names are copies is found
// in the map, as before.
//
// Only the map's own keys are remembered in front of it: a string a
// Tables holds is one it keeps, which no one may change (Go strings are
// immutable; a decoder's arena text is never a table's name), so one at
// the same address and of the same length is the same name.
//
// A Tables is not safe for concurrent use. The zero Tables is ready.
type Tables struct {
	m map[changelog.Table]tableEntry
	// recent holds the entries found last; next is the one a map hit
	// replaces. Four cover the tables a source transaction interleaves
	// in the common case, as Buffer.state's four do.
	recent [4]tableEntry
	next   uint8
}

// tableEntry is a source table, as the map holds its key, and its Table.
type tableEntry struct {
	src changelog.Table
	t   *Table
}

// Get returns the Table of source table src, and whether there is one.
func (ts *Tables) Get(src changelog.Table) (*Table, bool) {
	for i := range ts.recent {
		r := &ts.recent[i]
		if r.t != nil && sameString(r.src.Name, src.Name) && sameString(r.src.Namespace, src.Namespace) {
			return r.t, true
		}
	}
	e, ok := ts.m[src]
	if !ok {
		return nil, false
	}
	ts.recent[ts.next%uint8(len(ts.recent))] = e
	ts.next++
	return e.t, true
}

// Put makes t the Table of source table src.
func (ts *Tables) Put(src changelog.Table, t *Table) {
	if ts.m == nil {
		ts.m = make(map[changelog.Table]tableEntry)
	}
	if old, ok := ts.m[src]; ok {
		// Keep the key the map holds, and forget its old Table in front.
		src = old.src
		ts.recent = [len(ts.recent)]tableEntry{}
	}
	ts.m[src] = tableEntry{src: src, t: t}
}

// Clear forgets every table.
func (ts *Tables) Clear() {
	clear(ts.m)
	ts.recent = [len(ts.recent)]tableEntry{}
}

// All calls f with every source table and its Table, in no order.
func (ts *Tables) All(f func(src changelog.Table, t *Table)) {
	for src, e := range ts.m {
		f(src, e.t)
	}
}

// sameString reports whether a and b are one string: the same length at
// the same address (any two empty strings).
func sameString(a, b string) bool {
	return len(a) == len(b) && (len(a) == 0 || unsafe.StringData(a) == unsafe.StringData(b))
}
