// Package jsonrecord holds the small pieces every JSON changelog decoder needs
// alike — telling a tombstone, overlaying an update's old values, reusing
// table names between records — so each format package keeps only what is
// its own.
package jsonrecord

import (
	"bytes"
	"sync/atomic"

	"github.com/txsink/txsink/changelog"
)

// IsTombstone reports whether a record holds no event: empty, white space,
// or the JSON literal null (a Kafka tombstone, or a deleted key's marker).
func IsTombstone(data []byte) bool {
	t := bytes.Trim(data, " \t\r\n")
	return len(t) == 0 || string(t) == "null"
}

// Overlay returns the before image of an update from formats that send the
// new row whole and only the changed columns' old values (Canal's and
// Maxwell's "old"): after, with each column of old put back. A column of
// old that after lacks is added.
func Overlay(after, old changelog.Row) changelog.Row {
	out := changelog.Row{
		Names:  append(make([]string, 0, len(after.Names)+len(old.Names)), after.Names...),
		Values: append(make([]changelog.Value, 0, len(after.Values)+len(old.Values)), after.Values...),
	}
	for i, n := range old.Names {
		out.Set(n, old.Values[i])
	}
	return out
}

// InternTable returns the table named by ns and name, reusing the strings
// of the cached table when the names match: records of one table follow
// each other, and this saves two allocations per record.
func InternTable(cache *atomic.Pointer[changelog.Table], ns, name []byte) changelog.Table {
	if t := cache.Load(); t != nil && string(ns) == t.Namespace && string(name) == t.Name {
		return *t
	}
	t := changelog.Table{Namespace: string(ns), Name: string(name)}
	cache.Store(&t)
	return t
}
