package debezium

import (
	"slices"
	"strings"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/internal/jsonrecord"
	"github.com/txsink/txsink/format/internal/jsonscan"
)

// An update's before image is read for the columns that decide the
// change: its key, by which the engine tells whether the update moved the
// row (issue #31). The engine says which those are per table
// (NarrowBefore). The rest of the image is passed over by the scanner,
// which still checks it as JSON and as text, so an update costs one full
// row built instead of two.
//
// Debezium writes "before" ahead of "source" and "op", so the image is
// read before the record has said its table or its kind: it is read for
// the columns of every table NarrowBefore named (one jsonscan.Keys), and
// judged once the whole record is read. The image read so is the change's
// Before only for an update of a table NarrowBefore named, and only when
// it holds every column named for that table; anything else (a delete,
// whose before image is its row and stays whole; a table not named; a
// column spelt in another case) has the image read again, whole, as
// without NarrowBefore.

var _ format.BeforeNarrower = (*Decoder)(nil)

// narrowing is what NarrowBefore said, for every table: replaced whole on
// each call, so that decoding reads it without a lock.
type narrowing struct {
	// keys are the columns of all the tables, and the spellings seen of
	// them (see learn).
	keys jsonscan.Keys
	// tables maps each table to its columns.
	tables map[changelog.Table][]string
	// spellings are the names the records spell a table's column with,
	// where they differ from it in case only.
	spellings []string
}

// NarrowBefore implements format.BeforeNarrower: of an update of table t
// only the before image's columns cols (its key columns) are read from
// then on, the rest passed over and checked as JSON and text only. No
// cols reads t's before images whole again. It is safe for concurrent use
// with decoding.
func (d *Decoder) NarrowBefore(t changelog.Table, cols []string) {
	d.narrowMu.Lock()
	defer d.narrowMu.Unlock()
	old := d.narrow.Load()
	tables := map[changelog.Table][]string{}
	var spellings []string
	if old != nil {
		for k, v := range old.tables {
			tables[k] = v
		}
		spellings = old.spellings
	}
	if len(cols) == 0 {
		delete(tables, t)
	} else {
		tables[t] = slices.Clone(cols)
	}
	d.storeNarrowing(tables, spellings)
}

// storeNarrowing makes tables and spellings the decoder's narrowing.
// d.narrowMu is held.
func (d *Decoder) storeNarrowing(tables map[changelog.Table][]string, spellings []string) {
	if len(tables) == 0 {
		d.narrow.Store(nil)
		return
	}
	var names []string
	for _, cols := range tables {
		for _, c := range cols {
			if !slices.Contains(names, c) {
				names = append(names, c)
			}
		}
	}
	for _, s := range spellings {
		if !slices.Contains(names, s) {
			names = append(names, s)
		}
	}
	d.narrow.Store(&narrowing{keys: jsonscan.NewKeys(names...), tables: tables, spellings: spellings})
}

// covers reports whether p, a before image read for n's columns, holds
// every column n names for table t: then it is all an update of t needs.
func (n *narrowing) covers(t changelog.Table, p *jsonscan.Pending) bool {
	cols, ok := n.tables[t]
	if !ok {
		return false
	}
	names := p.Names()
	for _, c := range cols {
		if !slices.Contains(names, c) && !slices.ContainsFunc(names, func(x string) bool { return sameColumn(x, c) }) {
			return false
		}
	}
	return true
}

// sameColumn reports whether names a and b name one column, as the engine
// maps a change's columns to its target's: whatever their case.
func sameColumn(a, b string) bool { return strings.ToLower(a) == strings.ToLower(b) }

// learn notes the spellings names, a whole before image of table t, gives
// the columns n names for t where they differ in case only, so that the
// next images are read for them.
func (d *Decoder) learn(n *narrowing, t changelog.Table, names []string) {
	var add []string
	for _, c := range n.tables[t] {
		for _, x := range names {
			if x != c && sameColumn(x, c) && !slices.Contains(n.spellings, x) {
				add = append(add, x)
				break
			}
		}
	}
	if len(add) == 0 {
		return
	}
	d.narrowMu.Lock()
	defer d.narrowMu.Unlock()
	cur := d.narrow.Load()
	if cur == nil || len(cur.spellings)+len(add) > maxSpellings {
		return
	}
	d.storeNarrowing(cur.tables, append(slices.Clone(cur.spellings), add...))
}

// maxSpellings bounds the spellings learnt, so that a stream of
// ever-changing names cannot grow the keys without end.
const maxSpellings = 64

// wholeBefore reads e's before image again, whole, where it was read for
// the columns of a narrowing (see narrow.go) and the change needs all of
// it, or an update's is not known to hold its key.
func (d *Decoder) wholeBefore(a *changelog.Arena, data []byte, rs *jsonscan.Rows, e *envelope) error {
	n := e.narrowed
	e.narrowed = nil
	s := d.env.Scanner(a, data)
	s.Skip(e.beforeAt)
	var err error
	if e.hasBefore, err = jsonrecord.ScanImage(&s, rs, &e.before, "before", hintMalformed); err != nil {
		return err
	}
	if e.op == "u" {
		d.learn(n, e.table, e.before.Names())
	}
	return nil
}
