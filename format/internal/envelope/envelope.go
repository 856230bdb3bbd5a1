// Package envelope is what every JSON format's decoder shares around the
// meaning of its fields: the Decode driver (tombstones, the position and
// size of each change, the *format.Error a refusal becomes, the count of
// skipped records), the reading of a record's top-level object through a
// field table (each member whose key is in the table handed to the format
// by index, the others passed over, a field seen twice refused), and the
// interning of what records repeat (column names, tables, transaction
// ids).
//
// A format keeps a Reader in its Decoder and a Fields table per object it
// reads, and writes only what its fields mean:
//
//	var fields = envelope.NewFields("database", "table", "type")
//
//	func (d *Decoder) DecodeIn(a *changelog.Arena, data []byte, pos changelog.Position) ([]changelog.Change, error) {
//		var r record
//		return d.env.Decode(data, pos,
//			func() ([]changelog.Change, error) { return d.decode(a, data, &r) },
//			func(error) string { return r.table })
//	}
//
//	func (d *Decoder) decode(a *changelog.Arena, data []byte, r *record) ([]changelog.Change, error) {
//		s := d.env.Scanner(a, data)
//		seen, err := d.env.ReadRecord(&s, fields, hintMalformed, func(f int) (err error) {
//			switch f { ... } // read the field's value at s into r
//			return err
//		})
//		...
//	}
//
// Decoding is the hot path, so nothing here goes through an interface:
// the driver calls the format's closure once per record and the field loop
// once per wanted field, the closures and the record stay on the decoding
// goroutine's stack (no allocation), and a key is found in the table with
// one look and a comparison of words (jsonscan.Keys), the members a format
// does not want passed over without a call each (jsonscan.Scanner.NextKeyOf).
// A table told the order its format's records write their fields in
// (Fields.Sequence) first compares the next bytes with the key it
// expects there, which costs less than finding a key in the table.
package envelope

import (
	"encoding/binary"
	"math"
	"strconv"
	"sync/atomic"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format/internal/jsonrecord"
	"github.com/txsink/txsink/format/internal/jsonscan"
)

// Reader is a format decoder's shared state: its name and JSON hint for
// errors, what it interns, and how many records it skipped. Set the
// exported fields in the decoder's constructor; the rest is ready at its
// zero value. It is safe for concurrent use.
type Reader struct {
	// Format is the format's name, for errors ("canal-json").
	Format string
	// HintJSON is what to do about a record that is not JSON or not an
	// object.
	HintJSON string
	// CountSkips makes Decode count the records that decode to no change
	// (see Skipped). It is off for formats whose skipped records are
	// routine (Debezium's BEGIN), to spare the shared counter.
	CountSkips bool
	// NoTombstones makes Decode pass every record to read, for a format
	// that says itself which records are no change (txsink-json refuses
	// null).
	NoTombstones bool

	skipped atomic.Int64
	names   jsonscan.Names
	tables  jsonrecord.Tables
	strs    jsonrecord.LastString
}

// Skipped returns how many records Decode decoded to no change, when
// CountSkips is set. Tombstones are not counted.
func (e *Reader) Skipped() int64 { return e.skipped.Load() }

// Table returns the table named by ns and name, sharing the strings of a
// table seen before (see jsonrecord.Tables).
func (e *Reader) Table(ns, name []byte) changelog.Table { return e.tables.Intern(ns, name) }

// String returns b as a string shared with the previous records that
// repeat it (a transaction's id, see jsonrecord.LastString).
func (e *Reader) String(a *changelog.Arena, b []byte) string { return e.strs.Get(a, b) }

// Scanner returns a scanner of data that interns column names in the
// Reader and places rows in a (nil for the heap).
func (e *Reader) Scanner(a *changelog.Arena, data []byte) jsonscan.Scanner {
	s := jsonscan.New(data)
	s.UseNames(&e.names)
	s.UseArena(a)
	return s
}

// Decode is the Decode of format.Decoder around read, which decodes the
// record: a tombstone (blank or null, unless NoTombstones) is no change;
// read's changes get pos and each an equal share of len(data) as Size; no
// change counts as skipped (CountSkips); and read's error becomes the
// *format.Error of jsonrecord.Fail naming the table table(err) returns
// ("" for none), with HintJSON for a JSON syntax error.
func (e *Reader) Decode(data []byte, pos changelog.Position, read func() ([]changelog.Change, error), table func(error) string) ([]changelog.Change, error) {
	if !e.NoTombstones && jsonrecord.IsTombstone(data) {
		return nil, nil
	}
	cs, err := read()
	if err != nil {
		return nil, e.Refuse(pos, table(err), err)
	}
	return e.Decoded(cs, data, pos), nil
}

// Refuse is the error of Decode for a record at pos that read refused
// with err, in table ("" for none): for a format that calls read and
// table itself rather than through Decode's closures (see Decoded).
func (e *Reader) Refuse(pos changelog.Position, table string, err error) error {
	return jsonrecord.Fail(e.Format, pos, table, err, e.HintJSON)
}

// Decoded is the end of Decode for the changes cs that data decoded to,
// for a format whose decoder does Decode's steps itself, without its
// closures (a call each, and their set-up, per record): after a
// tombstone check (jsonrecord.IsTombstone, unless NoTombstones), its own
// read, and Refuse for an error. It gives each change pos and an equal
// share of len(data) as Size, and counts no change as skipped
// (CountSkips).
func (e *Reader) Decoded(cs []changelog.Change, data []byte, pos changelog.Position) []changelog.Change {
	if len(cs) == 0 {
		if e.CountSkips {
			e.skipped.Add(1)
		}
		return nil
	}
	for i := range cs {
		cs[i].Pos = pos
		cs[i].Size = int32(min(len(data)/len(cs), math.MaxInt32))
	}
	return cs
}

// ReadRecord reads a whole record at s, an object, with fields: a record
// that is another JSON value is refused (see Object), the object is read
// by fields.Read, and nothing may follow it.
func (e *Reader) ReadRecord(s *jsonscan.Scanner, fields *Fields, hint string, field func(f int) error) (Seen, error) {
	if err := e.Object(s); err != nil {
		return 0, err
	}
	seen, err := fields.Read(s, hint, field)
	if err != nil {
		return seen, err
	}
	return seen, s.End()
}

// Object refuses a record at s that is not a JSON object, with HintJSON;
// its object is read next.
func (e *Reader) Object(s *jsonscan.Scanner) error {
	if c := s.Peek(); c != '{' {
		tok, err := s.Value()
		if err != nil {
			return err
		}
		return &jsonrecord.Error{Reason: "record is a JSON " + tok.Kind.String() + ", not an object", Hint: e.HintJSON}
	}
	return nil
}

// Seen is the set of the fields of a Fields an object held: field f is
// bit 1<<f.
type Seen uint64

// Has reports whether the object held field f (below MaxFields, as every
// field of a table is).
func (s Seen) Has(f int) bool { return s&(1<<(uint(f)&(MaxFields-1))) != 0 }

// Fields is a field table: the names of the members of an object a format
// reads, indexed in the order given. Make one per kind of object, once
// (a package variable); it is read only.
type Fields struct {
	keys jsonscan.Keys
	// repeatable are the fields that may appear more than once (the last
	// one counts): fields with a meaning on some records only, which other
	// producers use for their own.
	repeatable Seen
	// strict refuses a member whose key is not in the table.
	strict bool
	// The order a format's records write their fields in (see
	// Sequence): firsts are the fields an object may start with, as
	// their keys are written first, `"name":`; next[f] is the field
	// expected after field f (-1 for none), and lits[f] field f's key as
	// the member after another is written, `,"name":`.
	firsts []litKey
	next   [MaxFields]int8
	lits   []litKey
}

// Names returns the names of the fields, in the order of their indexes.
func (t *Fields) Names() []string { return t.keys.Names() }

// MaxFields is how many fields a table can hold.
const MaxFields = 64

// NewFields returns the table of the fields names, field i being names[i].
func NewFields(names ...string) *Fields {
	if len(names) > MaxFields {
		panic("envelope: more than " + strconv.Itoa(MaxFields) + " fields")
	}
	t := &Fields{keys: jsonscan.NewKeys(names...)}
	for f := range t.next {
		t.next[f] = -1
	}
	return t
}

// Sequence tells the order the records of a format usually write some of
// the fields in: fs[0] may be an object's first field, and each of fs
// follows the one before it, with no other member between. Read looks
// for the expected field's key first, compared as the bytes of a compact
// key, and reads the member the general way when it is not there, so a
// record in another order is read as before, only not as fast (a few
// instructions per member). A field whose name is not plain ASCII or is
// longer than 12 bytes is never expected. It returns the table.
func (t *Fields) Sequence(fs ...int) *Fields {
	if t.lits == nil {
		for f, n := range t.Names() {
			t.lits = append(t.lits, newLitKey(f, ",", n))
		}
	}
	t.firsts = append(t.firsts, newLitKey(fs[0], "", t.Names()[fs[0]]))
	for i := 1; i < len(fs); i++ {
		t.next[fs[i-1]] = int8(fs[i])
	}
	return t
}

// litKey is the text of a member's key, up to 16 bytes, as two words to
// compare the record's next 16 bytes with under a mask.
type litKey struct {
	w, m [2]uint64
	n    int8 // the text's length
	f    int8 // the field
}

// newLitKey returns the key of field f, named name, as written after
// prefix (`,` or nothing): one that matches nothing when the name is
// longer than 12 bytes or not plain ASCII.
func newLitKey(f int, prefix, name string) litKey {
	never := litKey{w: [2]uint64{1, 0}, f: int8(f)} // no masked word is 1
	if len(name) > 12 {
		return never
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return never
		}
	}
	lit := prefix + `"` + name + `":`
	k := litKey{n: int8(len(lit)), f: int8(f)}
	for i := 0; i < len(lit); i++ {
		k.w[i/8] |= uint64(lit[i]) << (8 * (i % 8))
		k.m[i/8] |= 0xff << (8 * (i % 8))
	}
	return k
}

// at reports whether d holds k's text at i (and 16 bytes from there: a
// key is followed by its value).
func (k *litKey) at(d []byte, i int) bool {
	if len(d)-i < 16 {
		return false
	}
	b := (*[16]byte)(d[i : i+16])
	return binary.LittleEndian.Uint64(b[:8])&k.m[0] == k.w[0] && binary.LittleEndian.Uint64(b[8:])&k.m[1] == k.w[1]
}

// firstAt reads the key of an object's first member at s when it is one
// of the fields the table's Sequence expects first, and returns its
// field, or -1 for the general way.
func (t *Fields) firstAt(s *jsonscan.Scanner) int {
	for j := range t.firsts {
		if k := &t.firsts[j]; k.at(s.Data(), s.Pos()) {
			s.Skip(int(k.n))
			return int(k.f)
		}
	}
	return -1
}

// Repeatable lets the fields fs appear more than once in an object, and
// returns the table.
func (t *Fields) Repeatable(fs ...int) *Fields {
	for _, f := range fs {
		t.repeatable |= 1 << f
	}
	return t
}

// Strict makes Read refuse a member whose key is not in the table, for a
// format whose records have no room for others' fields, and returns the
// table.
func (t *Fields) Strict() *Fields {
	t.strict = true
	return t
}

// Read reads the object at s: for each member whose key is field f of the
// table it calls field(f), which reads the member's value at s; it passes
// over the other members (or refuses them, when the table is Strict). A
// field that appears a second time is refused, after field has read it
// (its own refusal comes first), unless it is Repeatable. The refusals are
// *jsonrecord.Error with hint. It returns the fields the object held.
func (t *Fields) Read(s *jsonscan.Scanner, hint string, field func(f int) error) (Seen, error) {
	var seen Seen
	if err := s.BeginObject(); err != nil {
		return seen, err
	}
	f := t.firstAt(s)
	for first := true; ; first = false {
		if f < 0 {
			var ok bool
			var err error
			if t.strict {
				f, ok, err = t.nextStrict(s, first, hint)
			} else {
				f, ok, err = s.NextKeyOf(first, &t.keys)
			}
			if err != nil || !ok {
				return seen, err
			}
		}
		if err := field(f); err != nil {
			return seen, err
		}
		bit := Seen(1) << (uint(f) & (MaxFields - 1)) // f < MaxFields: one shift
		if seen&bit&^t.repeatable != 0 {
			// The key matched the name exactly once decoded, so the
			// name is the key as s.Text would give it.
			return seen, &jsonrecord.Error{Reason: "field " + strconv.Quote(t.Names()[f]) + " appears twice", Hint: hint}
		}
		seen |= bit
		// The field the table's Sequence expects next, when its key is
		// there (written out here rather than a call: this loop is the
		// hot path of every JSON format).
		if n := t.next[f]; n >= 0 && t.lits[n].at(s.Data(), s.Pos()) {
			s.Skip(int(t.lits[n].n))
			f = int(n)
		} else {
			f = -1
		}
	}
}

// nextStrict reads the key of the next member, which must be in the
// table.
func (t *Fields) nextStrict(s *jsonscan.Scanner, first bool, hint string) (int, bool, error) {
	key, ok, err := s.NextKey(first)
	if err != nil || !ok {
		return -1, ok, err
	}
	if f := s.FindKey(&t.keys, key); f >= 0 {
		return f, true, nil
	}
	return -1, false, &jsonrecord.Error{Reason: "unknown field " + strconv.Quote(s.Text(key)), Hint: hint}
}
