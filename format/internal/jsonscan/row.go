package jsonscan

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/internal/box"
)

// member is one object member found by ScanRow: where its key and value
// lie, as offsets from the row's opening brace. It is kept small (20 bytes,
// not the 64 of two Tokens) because Rows keeps room for 32 on its user's
// stack, and that room is zeroed on every call.
type member struct {
	kStart, kEnd, vStart, vEnd uint32
	vKind                      Kind
	kPlain, vPlain             bool
}

// keyWordOf returns the word of the key whose text (between its quotes,
// escapes and all) is d[start:end]: for a text of up to 8 bytes, its
// bytes as a little-endian word, zero-padded; for a longer one, longWord.
// A key's text holds no NUL byte (a control character is refused in a
// string), so two texts of up to 8 bytes have one word only when they are
// equal. (Names.matches reads the same words inline.)
func keyWordOf(d []byte, start, end int) uint64 {
	if end-start > 8 {
		return longWord
	}
	if start+8 <= len(d) {
		return binary.LittleEndian.Uint64(d[start:]) & keyMasks8[end-start]
	}
	return keyWord(d[start:end])
}

// maxRowBytes bounds the text of a row object, so member offsets fit.
const maxRowBytes = 1<<32 - 1

// Names interns the column-name lists of row images: rows that name the
// same columns in the same order share one []string, instead of each
// carrying names of its own, and whoever maps a row's columns can tell a
// list it has seen at the cost of comparing string pointers. A decoder keeps
// one and gives it to its scanners (Scanner.UseNames). It is safe for
// concurrent use; the zero Names is ready.
type Names struct {
	// p holds the lists, copied on write: lookups never lock.
	p atomic.Pointer[nameSet]
}

// nameSet is what a Names holds: its lists, and for candidate, for each
// name of up to 8 bytes that begins one, the longest list it begins.
type nameSet struct {
	lists  []nameList
	firsts []firstName
}

// firstName is a name that begins the list l, the longest that it begins.
type firstName struct {
	key nameKey
	l   *nameList
}

// nameList is a list of Names with, for each name, the word find compares
// a key's word (see keyWordOf) with, in one step instead of a call: for a
// name of up to 8 bytes, its bytes as a little-endian word (zero-padded);
// for a longer one, longWord, and the name is in long too.
type nameList struct {
	names []string
	words []uint64
	long  []longName
	keys  []nameKey // the names again, for scanMembers (see candidate)
}

// nameKey is a name of a nameList as scanMembers compares the key it reads
// with it: its length n, and for a name of up to 8 bytes its bytes as a
// little-endian word w0 (zero-padded), for one of 9 to 16 its first and
// last 8 bytes w0 and w1. A longer name is not compared so.
type nameKey struct {
	w0, w1 uint64
	n      uint32
}

// candidate returns the list a row is likely to name, given the input d
// and the offset at of the quote of the row's first key, nil for none:
// the longest of the lists whose first name is that key (written compact,
// as `"name":`, and of up to 8 bytes). scanMembers compares the row's
// keys with its names as it reads them, and a row that names it needs no
// find; the longest, because the lists of a table's key columns alone
// (ScanRowOf's) begin as its rows do. At most one of the distinct first
// names is followed by the quote in d.
func (n *Names) candidate(d []byte, at int) *nameList {
	set := n.p.Load()
	if set == nil || at < 0 || at+19 > len(d) {
		return nil
	}
	b := (*[18]byte)(d[at+1:])
	w := binary.LittleEndian.Uint64(b[:8])
	for i := range set.firsts {
		f := &set.firsts[i]
		if k := f.key.n; w&keyMasks8[k] == f.key.w0 && b[k] == '"' && b[k+1] == ':' {
			return f.l
		}
	}
	return nil
}

// longName is a name of a nameList longer than 8 bytes: its index, and
// for one of up to 16 bytes its first and last 8 bytes as little-endian
// words, which together are all of it.
type longName struct {
	i          int
	head, tail uint64
}

// longWord is the word of a name longer than 8 bytes: a word whose first
// byte is 0 and second is not, which no key of up to 8 bytes masks to
// (its first byte would be a NUL, which a JSON string never holds raw, or
// it would be empty, whose word is 0).
const longWord = 0x0100

// maxNameLists bounds a Names; past it, it starts over. A table usually
// has one list per image, so the bound is reached only by a stream of many
// tables or ever-changing columns.
const maxNameLists = 64

// find returns the list whose names are the keys of ms, nil if none. row is
// the input from the offset the offsets of ms are from: the bytes after
// the row let a short last key be read as a word.
//
// The keys' words are compared with the names' words first, one step a
// column: that tells every key of up to 8 bytes (a key holds no NUL byte,
// nor does a kept name, so the words are equal only when the lengths are
// and the bytes) and that the longer keys are as many and where the longer
// names are, which are then compared as two words (up to 16 bytes) or as
// text. (It was 224 instructions per Debezium record of
// BenchmarkPipeline/insert-only, comparing name by name, and 142 so.)
func (n *Names) find(row []byte, ms []member) []string {
	set := n.p.Load()
	if set == nil {
		return nil
	}
	for li := range set.lists {
		l := &set.lists[li]
		if len(l.names) == len(ms) && l.matches(row, ms) {
			return l.names
		}
	}
	return nil
}

// matches reports whether the keys of ms, members of row, are l's names:
// each key's word (see keyWordOf) is l's word for its name, and each of
// l's long names is its key's text. It indexes ms rather than ranging over
// copies of its elements, which the compiler made on the stack (find took
// 64 instructions per column so), and leaves the calls of the rare ways
// (a key near the input's end, a long name over 16 bytes) out of the
// loops.
func (l *nameList) matches(row []byte, ms []member) bool {
	words := l.words[:len(ms)]
	for i := range ms {
		ks, k := int(ms[i].kStart), ms[i].kEnd-ms[i].kStart
		w := uint64(longWord)
		if k <= 8 {
			if ks+8 > len(row) {
				return l.matchesText(row, ms)
			}
			w = binary.LittleEndian.Uint64(row[ks:ks+8]) & keyMasks8[k]
		}
		if w != words[i] {
			return false
		}
	}
	return l.matchesLong(row, ms)
}

// matchesLong reports whether the keys of ms, members of row, whose
// words are l's, are l's long names.
func (l *nameList) matchesLong(row []byte, ms []member) bool {
	for _, ln := range l.long {
		m := &ms[ln.i]
		ks, ke := int(m.kStart), int(m.kEnd)
		name := l.names[ln.i]
		if ke-ks != len(name) || ke > len(row) || ks > ke {
			return false
		}
		if len(name) <= 16 {
			if binary.LittleEndian.Uint64(row[ks:]) != ln.head || binary.LittleEndian.Uint64(row[ke-8:]) != ln.tail {
				return false
			}
			continue
		}
		if string(row[ks:ke]) != name {
			return false
		}
	}
	return true
}

// matchesText is matches for keys near the end of row, whose words are
// read a byte at a time.
func (l *nameList) matchesText(row []byte, ms []member) bool {
	for i := range ms {
		if keyWordOf(row, int(ms[i].kStart), int(ms[i].kEnd)) != l.words[i] {
			return false
		}
	}
	return l.matchesLong(row, ms)
}

// keyMasks8 is keyMasks with 8 bytes: keyMasks8[n] keeps the first n
// bytes of a little-endian word, n up to 8.
var keyMasks8 = [9]uint64{0, 0xff, 0xffff, 0xffffff, 0xffffffff, 0xffffffffff, 0xffffffffffff, 0xffffffffffffff, 0xffffffffffffffff}

// newNames returns the decoded keys of ms, members of row, as a list
// whose plain names share one allocation of their own, so that the list
// keeps no record's text alive.
func newNames(row []byte, ms []member) []string {
	var buf []byte
	for _, m := range ms {
		if m.kPlain {
			buf = append(buf, row[m.kStart:m.kEnd]...)
		}
	}
	all := string(buf)
	l := make([]string, len(ms))
	at := 0
	for i, m := range ms {
		if !m.kPlain {
			l[i] = Unescape(row[m.kStart:m.kEnd])
			continue
		}
		n := int(m.kEnd - m.kStart)
		l[i] = all[at : at+n]
		at += n
	}
	return l
}

// keep adds l, a list of distinct names, to the lists find looks in.
func (n *Names) keep(l []string) {
	old := n.p.Load()
	var lists []nameList
	if old != nil && len(old.lists) < maxNameLists {
		lists = append(make([]nameList, 0, len(old.lists)+1), old.lists...)
	}
	words := make([]uint64, len(l))
	keys := make([]nameKey, len(l))
	var long []longName
	for i, name := range l {
		words[i] = keyWordOf([]byte(name), 0, len(name))
		keys[i].n = uint32(min(len(name), 1<<31))
		switch {
		case len(name) <= 8:
			keys[i].w0 = words[i]
		case len(name) <= 16:
			keys[i].w0, keys[i].w1 = keyWord([]byte(name)), keyTail([]byte(name))
		}
		if len(name) > 8 {
			ln := longName{i: i}
			if len(name) <= 16 {
				ln.head, ln.tail = keyWord([]byte(name)), keyTail([]byte(name))
			}
			long = append(long, ln)
		}
	}
	lists = append(lists, nameList{names: l, words: words, long: long, keys: keys})
	set := &nameSet{lists: lists}
	for li := range lists {
		l := &lists[li]
		if len(l.keys) == 0 || l.keys[0].n > 8 {
			continue // a list that begins with a longer name has no candidate
		}
		i := slices.IndexFunc(set.firsts, func(f firstName) bool { return f.key == l.keys[0] })
		switch {
		case i < 0:
			set.firsts = append(set.firsts, firstName{key: l.keys[0], l: l})
		case len(l.keys) > len(set.firsts[i].l.keys):
			set.firsts[i].l = l
		}
	}
	n.p.Store(set)
}

// ErrDuplicateColumn is wrapped by the error Row returns for an object that
// names a column twice.
var ErrDuplicateColumn = errors.New("duplicate column")

// Row reads a JSON object of column values into a changelog.Row, keeping
// the columns in the order the object lists them. Values follow the
// changelog.Value rules:
//
//	null          nil
//	true, false   bool
//	number        changelog.Number, its exact text
//	string        string
//	object, array changelog.JSON, a copy of the raw text
//
// The row does not share memory with the input. To keep allocations low,
// the object's text is copied once into a string and the plain string
// and number values are substrings of it; the copy is about the size
// of the values, which live as long as the row anyway. The values and
// the headers they point to share one allocation (see build). With
// UseNames, the names come from the Names: rows naming the same columns
// share one slice, which no one may modify (see changelog.Row).
//
// An object that names a column twice is an error wrapping
// ErrDuplicateColumn: encoding/json would keep the last value silently, and a
// row with an ambiguous column must not reach a database.
//
// Row is ScanRow and Rows.Row in one; a decoder that builds a change from
// several images uses those, to build them together.
func (s *Scanner) Row() (row changelog.Row, err error) {
	var rs Rows
	var p Pending
	if err := s.ScanRow(&rs, &p); err != nil {
		return row, err
	}
	rs.build(s.mem, s.data, &p, &row)
	return row, nil
}

// Rows holds the members of the row objects ScanRow found, so that the
// rows can be built after they are read: once a decoder has read a whole
// record, it knows which of them it needs. A decoder keeps one on its
// stack for each record; the zero Rows is ready. Nothing built from it
// refers to it.
type Rows struct {
	n   int // members so far
	buf [32]member
	// more holds the members past len(buf); a record whose rows have
	// that many columns is rare and large, and pays an allocation.
	more []member
}

// Pending is a row object ScanRow has read and checked, not yet built. It
// holds offsets into the input and into its Rows, no pointers to either,
// so a decoder can keep it anywhere without moving them to the heap.
type Pending struct {
	start, end int      // the object's text: input[start:end]
	lo, hi     int      // its members: the Rows' lo to hi
	names      []string // its column names, nil for an empty object
}

// Len returns the number of columns of the row.
func (p *Pending) Len() int { return p.hi - p.lo }

// Names returns the row's column names, which no one may modify (nil for
// an empty object).
func (p *Pending) Names() []string { return p.names }

// next returns room for one more member.
func (rs *Rows) next() *member {
	rs.n++
	if rs.n <= len(rs.buf) {
		return &rs.buf[rs.n-1]
	}
	rs.more = append(rs.more, member{})
	return &rs.more[len(rs.more)-1]
}

// foundKey returns the key of the member NextKeyOf just stopped at, whose
// decoded text is name: the plain "name": right before the scanner's
// position, else the key at keyAt (see Scanner.keyAt). Bytes equal to
// name between quotes are the key itself: a quote escaped before them
// would make a decoded key longer than name.
func (s *Scanner) foundKey(name string) Token {
	d, e := s.data, s.pos-2
	if b := e - len(name); b >= 1 && d[e] == '"' && d[e+1] == ':' && d[b-1] == '"' && string(d[b:e]) == name {
		return Token{Kind: String, Start: b, End: e, Plain: true}
	}
	return s.keyToken(s.keyAt)
}

// keyToken returns the key whose text starts at at, a string read whole
// before.
func (s *Scanner) keyToken(at int) Token {
	end, plain, _ := scanString(s.data, at)
	return Token{Kind: String, Start: at, End: end, Plain: plain}
}

// set makes m the member whose key and value the scanner read, as
// offsets from start, its row's opening brace. (ScanRow's loop writes
// the same fields itself: through set it took 90 instructions more per
// record of 26 members.)
func (m *member) set(start int, key, val Token) {
	m.kStart, m.kEnd = uint32(key.Start-start), uint32(key.End-start)
	m.vStart, m.vEnd = uint32(val.Start-start), uint32(val.End-start)
	m.vKind, m.kPlain, m.vPlain = val.Kind, key.Plain, val.Plain
}

// members returns the members of p, a copy when they straddle buf and
// more.
func (rs *Rows) members(p *Pending) []member {
	switch n := len(rs.buf); {
	case p.hi <= n:
		return rs.buf[p.lo:p.hi]
	case p.lo >= n:
		return rs.more[p.lo-n : p.hi-n]
	default:
		return append(append([]member(nil), rs.buf[p.lo:]...), rs.more[:p.hi-n]...)
	}
}

// ScanRow reads and checks a JSON object of column values, as Row does,
// keeps its members in rs and sets *p to the row, for Rows.Row or
// Rows.Change to build. The errors are Row's, at the same points of the
// input: a duplicate column is refused before anything after the object is
// read.
//
// Structs here are written in place, field by field, rather than built and
// copied (a member into rs, the row into *p): the compiler copies a struct
// with wide loads of the narrower stores that built it, which stall the
// processor, and Row spent a third of its own time on that.
func (s *Scanner) ScanRow(rs *Rows, p *Pending) error {
	if err := s.BeginObject(); err != nil {
		return err
	}
	start := s.pos - 1
	p.start, p.lo, p.names = start, rs.n, nil
	// The list the row likely names, whose names scanMembers compares
	// its keys with as it reads them: a row read whole in one call
	// whose keys are all its names needs no find.
	var cand *nameList
	if s.names != nil {
		cand = s.names.candidate(s.data, s.pos)
	}
	for first := true; ; first = false {
		// Compact members with plain keys and scalar values, most of
		// a row's, in scanMembers' loop; the member it stops at, if
		// any, the general way.
		if rs.n < len(rs.buf) {
			at, n, end, named := scanMembers(s.data, s.pos, first, &rs.buf, rs.n, start, cand)
			first = first && at == s.pos
			s.pos, rs.n = at, n
			if end {
				if named {
					p.end, p.hi, p.names = s.pos, rs.n, cand.names
					return nil
				}
				break
			}
			cand = nil
		}
		key, ok, err := s.NextKey(first)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		// A plain string or a number right after the ':', most values
		// of a row, is read without the call and the dispatch of value;
		// any other value, and an error, is value's.
		var val Token
		d, v := s.data, s.pos
		scalar := false
		if v < len(d) {
			if c := d[v]; c == '"' {
				if end, plain, bad := scanString(d, v+1); bad == "" {
					s.pos, val, scalar = end+1, Token{Kind: String, Start: v + 1, End: end, Plain: plain}, true
				}
			} else if c == '-' || isDigit(c) {
				if end, bad := scanNumber(d, v); bad == "" {
					s.pos, val, scalar = end, Token{Kind: Number, Start: v, End: end}, true
				}
			}
		}
		if !scalar {
			if val, err = s.value(0); err != nil {
				return s.inColumn(err, key)
			}
		}
		if uint64(val.End-start) > maxRowBytes {
			return s.errf("row object longer than 4 GiB")
		}
		m := rs.next()
		m.kStart, m.kEnd = uint32(key.Start-start), uint32(key.End-start)
		m.vStart, m.vEnd = uint32(val.Start-start), uint32(val.End-start)
		m.vKind, m.kPlain, m.vPlain = val.Kind, key.Plain, val.Plain
	}
	return s.rowNames(rs, p, start)
}

// ScanRowOf is ScanRow for a row of which only the columns keys names are
// wanted: the other members are passed over as NextKeyOf passes them,
// checked as JSON and as text (an invalid UTF-8 byte is refused, naming
// its column) but not kept, so that *p is the row of the wanted columns
// alone, in the order the object lists them. A wanted column named twice
// is refused as ScanRow refuses it; a column not wanted named twice is not
// seen.
func (s *Scanner) ScanRowOf(rs *Rows, p *Pending, keys *Keys) error {
	if err := s.BeginObject(); err != nil {
		return err
	}
	start := s.pos - 1
	p.start, p.lo, p.names = start, rs.n, nil
	for first := true; ; first = false {
		k, ok, err := s.NextKeyOf(first, keys)
		if err != nil {
			if s.keyAt >= 0 {
				return s.inColumn(err, s.keyToken(s.keyAt))
			}
			return err
		}
		if !ok {
			break
		}
		// The few wanted members take the general way.
		key := s.foundKey(keys.names[k])
		val, err := s.value(0)
		if err != nil {
			return s.inColumn(err, key)
		}
		if uint64(val.End-start) > maxRowBytes {
			return s.errf("row object longer than 4 GiB")
		}
		rs.next().set(start, key, val)
	}
	return s.rowNames(rs, p, start)
}

// rowNames ends *p, a row object from start read up to the scanner's
// position whose members rs holds from p.lo, with its column names: an
// interned list when s has the same, else a new one, refused when it
// names a column twice.
func (s *Scanner) rowNames(rs *Rows, p *Pending, start int) error {
	p.end, p.hi = s.pos, rs.n
	if p.hi == p.lo {
		return nil
	}
	ms := rs.members(p)
	if s.names != nil {
		p.names = s.names.find(s.data[start:], ms)
	}
	if p.names == nil {
		p.names = newNames(s.data[start:s.pos], ms)
		if name, dup := Duplicate(p.names); dup {
			return fmt.Errorf("%w %q", ErrDuplicateColumn, name)
		}
		if s.names != nil && plainKeys(ms) {
			s.names.keep(p.names)
		}
	}
	return nil
}

// inColumn names the column key in err when it is bad text in the
// column's value, so that the refusal can say which value is not text.
func (s *Scanner) inColumn(err error, key Token) error {
	if se, ok := err.(*SyntaxError); ok && se.BadText {
		se.Column = s.Text(key)
	}
	return err
}

// Row builds the row p, which a scanner of data read into rs.
func (rs *Rows) Row(data []byte, p *Pending) (row changelog.Row) {
	rs.build(nil, data, p, &row)
	return row
}

// RowIn is Row with the row's memory in a (see changelog.Arena); with a
// nil arena it is Row.
func (rs *Rows) RowIn(a *changelog.Arena, data []byte, p *Pending) (row changelog.Row) {
	rs.build(a, data, p, &row)
	return row
}

// build makes the row p, which a scanner of data read into rs, into *row,
// in mem (the heap when nil).
func (rs *Rows) build(mem *changelog.Arena, data []byte, p *Pending, row *changelog.Row) {
	n := p.Len()
	switch {
	case n == 0:
	case mem != nil:
		rs.fill(mem, data, p, nil, mem.Values(n), mem.Strings(n), row, nil)
	default:
		_, values, hdrs := alloc[struct{}](n)
		rs.fill(nil, data, p, nil, values, hdrs, row, nil)
	}
}

// Change returns one change whose Before and After are the rows before and
// after (nil for none), which a scanner of data read into rs. The change,
// the values of both rows and the headers they point to are one
// allocation, and the rows' text is one more when the two lie close
// together in data (as Debezium's "before" and "after" do): a decoder pays
// two allocations per record instead of one for the change and two or
// three per row. The caller fills in the rest of the change.
func (rs *Rows) Change(data []byte, before, after *Pending) []changelog.Change {
	c, values, hdrs := alloc[[1]changelog.Change](pendingLen(before) + pendingLen(after))
	rs.fill(nil, data, before, after, values, hdrs, &c[0].Before, &c[0].After)
	return c[:]
}

// ChangeIn is Change with all of it in a (see changelog.Arena): the
// change, the values, their headers and the rows' text. With a nil arena
// it is Change.
func (rs *Rows) ChangeIn(a *changelog.Arena, data []byte, before, after *Pending) []changelog.Change {
	if a == nil {
		return rs.Change(data, before, after)
	}
	n := pendingLen(before) + pendingLen(after)
	c := a.Changes(1)
	rs.fill(a, data, before, after, a.Values(n), a.Strings(n), &c[0].Before, &c[0].After)
	return c
}

// fill makes the rows a and b (nil, or empty, for none) into *ra and *rb,
// with values and hdrs, as long as both rows together, as their storage,
// and their text copied into mem (the heap when nil).
func (rs *Rows) fill(mem *changelog.Arena, data []byte, a, b *Pending, values []changelog.Value, hdrs []string, ra, rb *changelog.Row) {
	na, nb := pendingLen(a), pendingLen(b)
	if na == 0 && nb > 0 {
		// One row (an insert's after), most changes: its text and
		// its values without rowTexts' cases and the slicing of two
		// rows' storage.
		rs.fillRow(b, mem.Text(data[b.start:b.end]), values, hdrs, rb)
		return
	}
	ta, tb := rowTexts(mem, data, a, b)
	if na > 0 {
		rs.fillRow(a, ta, values[:na:na], hdrs[:na], ra)
	}
	if nb > 0 {
		rs.fillRow(b, tb, values[na:], hdrs[na:], rb)
	}
}

// alloc returns a new C and room for n values and their headers, all in
// one allocation when n is at most 64 (see block). Past that, a row is
// wide enough for two more allocations not to matter. The sizes step by
// one up to 8, then by an eighth of the size, so a record wastes at most
// an eighth of the room for its values: what a record holds stays in
// memory until its change is applied, and costs the collector in bytes.
func alloc[C any](n int) (*C, []changelog.Value, []string) {
	switch {
	case n <= 1:
		return block[C, [1]changelog.Value, [1]string](n)
	case n <= 2:
		return block[C, [2]changelog.Value, [2]string](n)
	case n <= 3:
		return block[C, [3]changelog.Value, [3]string](n)
	case n <= 4:
		return block[C, [4]changelog.Value, [4]string](n)
	case n <= 5:
		return block[C, [5]changelog.Value, [5]string](n)
	case n <= 6:
		return block[C, [6]changelog.Value, [6]string](n)
	case n <= 7:
		return block[C, [7]changelog.Value, [7]string](n)
	case n <= 8:
		return block[C, [8]changelog.Value, [8]string](n)
	case n <= 10:
		return block[C, [10]changelog.Value, [10]string](n)
	case n <= 12:
		return block[C, [12]changelog.Value, [12]string](n)
	case n <= 14:
		return block[C, [14]changelog.Value, [14]string](n)
	case n <= 16:
		return block[C, [16]changelog.Value, [16]string](n)
	case n <= 20:
		return block[C, [20]changelog.Value, [20]string](n)
	case n <= 24:
		return block[C, [24]changelog.Value, [24]string](n)
	case n <= 28:
		return block[C, [28]changelog.Value, [28]string](n)
	case n <= 32:
		return block[C, [32]changelog.Value, [32]string](n)
	case n <= 40:
		return block[C, [40]changelog.Value, [40]string](n)
	case n <= 48:
		return block[C, [48]changelog.Value, [48]string](n)
	case n <= 56:
		return block[C, [56]changelog.Value, [56]string](n)
	case n <= 64:
		return block[C, [64]changelog.Value, [64]string](n)
	}
	return new(C), make([]changelog.Value, n), make([]string, n)
}

// block returns a new C and the first n of the values V and headers H
// (arrays of changelog.Value and string of one length, at least n) of one
// new struct: one allocation where three would be made separately.
func block[C, V, H any](n int) (*C, []changelog.Value, []string) {
	b := new(struct {
		c C
		v V
		h H
	})
	return &b.c, unsafe.Slice((*changelog.Value)(unsafe.Pointer(&b.v)), n), unsafe.Slice((*string)(unsafe.Pointer(&b.h)), n)
}

func pendingLen(p *Pending) int {
	if p == nil {
		return 0
	}
	return p.Len()
}

// maxTextGap is how many bytes between two rows' texts rowTexts copies to
// make the two one allocation.
const maxTextGap = 64

// rowTexts returns copies of the texts of a and b (nil, or empty, for
// none), made in mem (the heap when nil): substrings of one copy when
// they lie within maxTextGap of each other.
func rowTexts(mem *changelog.Arena, data []byte, a, b *Pending) (ta, tb string) {
	switch na, nb := pendingLen(a), pendingLen(b); {
	case na == 0 && nb == 0:
		return "", ""
	case nb == 0:
		return mem.Text(data[a.start:a.end]), ""
	case na == 0:
		return "", mem.Text(data[b.start:b.end])
	}
	lo, hi := min(a.start, b.start), max(a.end, b.end)
	if hi-lo-(a.end-a.start)-(b.end-b.start) > maxTextGap {
		return mem.Text(data[a.start:a.end]), mem.Text(data[b.start:b.end])
	}
	all := mem.Text(data[lo:hi])
	return all[a.start-lo : a.end-lo], all[b.start-lo : b.end-lo]
}

// fillRow makes the row p, whose text is img, into *row, with values and
// hdrs as its storage.
//
// The headers of the string and number values are boxed in place (see
// package box): each is written once, then pointed to, never written
// again. Nulls and booleans leave theirs unused, which costs less than
// counting them first. The loop does the scalars of compact rows alone
// and calls nothing, so that the compiler keeps its state in registers;
// an escaped string, an object or an array is left to fillHard, after
// it. (With every kind in one loop, the calls of the rare ones made it
// reload its state after each member: 218 instructions per record of
// BenchmarkPipeline/insert-only.)
func (rs *Rows) fillRow(p *Pending, img string, values []changelog.Value, hdrs []string, row *changelog.Row) {
	ms := rs.members(p)
	values, hdrs = values[:len(ms)], hdrs[:len(ms)]
	hard := false
	for i := range ms {
		m := &ms[i]
		switch m.vKind {
		case Number:
			hdrs[i] = img[m.vStart:m.vEnd]
			values[i] = box.Number(&hdrs[i])
		case String:
			if !m.vPlain {
				hard = true
				continue
			}
			hdrs[i] = img[m.vStart:m.vEnd]
			values[i] = box.String(&hdrs[i])
		case True:
			values[i] = true
		case False:
			values[i] = false
		case Object, Array:
			hard = true
		}
	}
	if hard {
		fillHard(ms, img, values, hdrs)
	}
	row.Names, row.Values = p.names, values
}

// fillHard makes the values of ms that fillRow leaves: escaped strings,
// objects and arrays.
func fillHard(ms []member, img string, values []changelog.Value, hdrs []string) {
	for i := range ms {
		switch m := &ms[i]; {
		case m.vKind == String && !m.vPlain:
			hdrs[i] = Unescape([]byte(img[m.vStart:m.vEnd]))
			values[i] = box.String(&hdrs[i])
		case m.vKind == Object || m.vKind == Array:
			values[i] = changelog.JSON(img[m.vStart:m.vEnd])
		}
	}
}

// plainKeys reports whether every key of ms is a plain string, whose name
// is its text in the input.
func plainKeys(ms []member) bool {
	for _, m := range ms {
		if !m.kPlain {
			return false
		}
	}
	return true
}

// Duplicate returns a name that occurs twice in names, if any. Rows are usually
// narrow, so a quadratic scan beats building a map.
func Duplicate(names []string) (string, bool) {
	if len(names) > 32 {
		seen := make(map[string]struct{}, len(names))
		for _, n := range names {
			if _, ok := seen[n]; ok {
				return n, true
			}
			seen[n] = struct{}{}
		}
		return "", false
	}
	for i := 1; i < len(names); i++ {
		for j := 0; j < i; j++ {
			if names[i] == names[j] {
				return names[i], true
			}
		}
	}
	return "", false
}

// scanMembers is ScanRow's loop, as skipMembers is NextKeyOf's: from
// d[i], the ',' before a member (or, first, its key) or the '}' that
// closes the object, it records in ms, from ms[n], the members of compact
// JSON with plain keys and scalar values (a plain string, a number, null,
// true, false) as offsets from start, and returns the offset it stopped
// at and how many members ms then holds; end says the object ended, at
// is then past its '}'. It stops at anything else (white space, an escape
// or a multi-byte character, an object or an array, a malformed value, a
// key or a value too near the input's end for its words to be read, a
// full ms), which it leaves to NextKey and Value from the start of its
// member, so that the errors are theirs at the same offsets. It calls
// only numberEnd, for a number.
//
// Given cand (see Names.candidate), it compares each key with cand's next
// name as it reads it: a key that is that name, of up to 8 bytes, costs
// one word compared instead of its scan, and named says the object ended
// with its keys all of cand's names, in order, so that the row is
// cand's without find (find and rowNames took 193 instructions per record
// of BenchmarkPipeline/insert-only; candidate and these comparisons 85).
//
// It is skipMembers' loop again rather than one loop for both: the one
// loop kept more of its state on the stack and cost NextKeyOf 220
// instructions more per Debezium "source" block (BenchmarkNextKeyOf 2,688
// and 2,907). TestNextKeyOfSkips and TestScanRowFast hold both to the
// general way.
func scanMembers(d []byte, i int, first bool, ms *[32]member, n, start int, cand *nameList) (at, n2 int, end, named bool) {
	d = d[:len(d):len(d)] // cap(d) == len(d), as in skipMembers
	j := i + 1
	switch {
	case i+2 <= len(d) && binary.LittleEndian.Uint16(d[i:i+2]) == commaQuote && !first:
	case i < len(d) && d[i] == '"' && first:
		j = i
	case i < len(d) && d[i] == '}':
		return i + 1, n, true, false
	default:
		return i, n, false, false
	}
	// ki is the index in keys of the name the next key must be for every
	// key so far to have been keys' names, -1 when one was not.
	var keys []nameKey
	ki := -1
	if cand != nil {
		keys, ki = cand.keys, 0
	}
	for n < len(ms) {
		// The key (its opening quote at j), as skipMembers reads it;
		// or, when it is the next of keys' names, up to 8 bytes, one
		// word compared: the bytes of a name kept are a key's, checked
		// when it was read.
		if len(d)-j < 19 {
			return i, n, false, false
		}
		b := (*[18]byte)(d[j+1:])
		e := 0
		var c byte // the value's first byte, in b
		if uint(ki) < uint(len(keys)) && keys[ki].n <= 8 {
			if k := keys[ki].n; binary.LittleEndian.Uint64(b[:8])&keyMasks8[k] == keys[ki].w0 && b[k] == '"' && b[k+1] == ':' {
				e, c = j+1+int(k), b[k+2]
				ki++
				goto value
			}
			ki = -1
		}
		if m := special8(binary.LittleEndian.Uint64(b[:8])); m != 0 {
			k := int(bits.TrailingZeros64(m)>>3) & 7
			if b[k] != '"' || b[k+1] != ':' {
				return i, n, false, false
			}
			e, c = j+1+k, b[k+2]
		} else if m := special8(binary.LittleEndian.Uint64(b[8:16])); m != 0 {
			k := int(bits.TrailingZeros64(m)>>3) & 7
			if b[8+k] != '"' || b[9+k] != ':' {
				return i, n, false, false
			}
			e, c = j+9+k, b[10+k]
		} else {
			return i, n, false, false
		}
		// A key of 9 to 16 bytes is the next name by its first and
		// last 8 bytes, and its length.
		if ki >= 0 {
			if uint(ki) < uint(len(keys)) && keys[ki].n > 8 && keys[ki].n <= 16 && uint32(e-j-1) == keys[ki].n &&
				binary.LittleEndian.Uint64(b[:8]) == keys[ki].w0 && binary.LittleEndian.Uint64(d[e-8:e]) == keys[ki].w1 {
				ki++
			} else {
				ki = -1
			}
		}
	value:
		// The value, from v up to p, of kind kind; vs and ve delimit
		// its text as a Token does.
		v, p, kind := e+2, 0, String
		vs, ve := v, 0
		switch {
		case c == '"':
			for p = v + 1; ; p += 8 {
				if p+8 > len(d) {
					return i, n, false, false
				}
				if m := special8(binary.LittleEndian.Uint64(d[p : p+8])); m != 0 {
					p += bits.TrailingZeros64(m) >> 3
					break
				}
			}
			if d[p] != '"' {
				return i, n, false, false
			}
			vs, ve = v+1, p
			p++
		case c == 'n' && v+4 <= len(d) && binary.LittleEndian.Uint32(d[v:v+4]) == litNull:
			p, kind = v+4, Null
		case c == 't' && v+4 <= len(d) && binary.LittleEndian.Uint32(d[v:v+4]) == litTrue:
			p, kind = v+4, True
		case c == 'f' && v+5 <= len(d) && binary.LittleEndian.Uint32(d[v:v+4]) == litFals && d[v+4] == 'e':
			p, kind = v+5, False
		case c-'0' < 10 || c == '-':
			// A number of up to 7 digits and of up to 7 after a
			// point, most of a row's, read a word at a time without a
			// call (a call made the loop keep its state on the stack
			// for every member); any other, from the start, by
			// numberEnd.
			p, kind = v, Number
			if c-'1' < 9 && v+16 <= len(d) {
				if m := nonDigit8(binary.LittleEndian.Uint64(d[v : v+8])); m != 0 {
					p += bits.TrailingZeros64(m) >> 3
					if d[p] == '.' {
						m := nonDigit8(binary.LittleEndian.Uint64(d[p+1 : p+9]))
						if k := bits.TrailingZeros64(m) >> 3; m != 0 && k > 0 {
							p += 1 + k
						} else {
							p = v
						}
					}
					if d[p]|0x20 == 'e' {
						p = v
					}
				}
			}
			if p == v {
				if p = numberEnd(d, v); p == v {
					return i, n, false, false
				}
			}
		default:
			return i, n, false, false
		}
		if ve == 0 {
			ve = p
		}
		if uint64(p-start) > maxRowBytes {
			return i, n, false, false
		}
		m := &ms[n]
		m.kStart, m.kEnd = uint32(j+1-start), uint32(e-start)
		m.vStart, m.vEnd = uint32(vs-start), uint32(ve-start)
		m.vKind, m.kPlain, m.vPlain = kind, true, kind == String
		n++
		// The next member's ',' and key's quote, or the object's end.
		if p+2 <= len(d) && binary.LittleEndian.Uint16(d[p:p+2]) == commaQuote {
			i, j = p, p+1
			continue
		}
		if p < len(d) && d[p] == '}' {
			return p + 1, n, true, ki == len(keys)
		}
		return p, n, false, false
	}
	return i, n, false, false
}
