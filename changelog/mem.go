package changelog

import "unsafe"

// MemBytes estimates the memory a decoded change holds while something
// keeps it: the Change itself, and for each value of its images an
// interface, a string header and its text with the column's name around
// it, which is what the JSON decoders keep (a row image's text copied
// whole, its values pointing into it, see changelog.Arena). Names of
// tables and columns, shared by all the changes of a table, are not
// counted.
//
// It is what bounds a source transaction held open in transaction mode
// (sink.transaction.multi-table.max-txn-bytes). A record's length does
// not: a Debezium record with the schema envelope is kilobytes for a row
// that takes a few hundred bytes, and a txsink-json line of short values
// decodes into several times its length. It counts what the change
// itself points to: for an insert of a narrow txsink-json row about 450
// bytes, where the decode job's arena holding it took about 970 (its
// slabs' room to spare), so a consumer of arenas counts their Bytes
// instead, and MemBytes is for changes on the heap.
func (c *Change) MemBytes() int {
	return changeBytes + c.Before.memBytes() + c.After.memBytes()
}

// changeBytes is the size of a Change.
const changeBytes = int(unsafe.Sizeof(Change{}))

// memBytes is a row image's part of MemBytes.
func (r *Row) memBytes() int {
	// An interface and a string header per value, the JSON punctuation
	// around each member ("name": and a comma).
	n := 36 * len(r.Values)
	for _, name := range r.Names {
		n += len(name)
	}
	for _, v := range r.Values {
		switch x := v.(type) {
		case string:
			n += len(x)
		case Number:
			n += len(x)
		case JSON:
			n += len(x)
		case []byte:
			n += len(x)
		case nil, bool:
			n += 4 // null, true
		default:
			n += 16 // a time, an integer: a small box of its own
		}
	}
	return n
}
