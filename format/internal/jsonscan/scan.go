// Package jsonscan is the JSON reader the format decoders share. It walks a
// document in place, keeps object members in the order they were written and
// numbers in their exact text, and builds a changelog.Row from an object with
// few allocations.
//
// It exists because encoding/json cannot do all three at once: decoding into
// map[string]any loses the column order, and json.Decoder.Token allocates for
// every token. The scanner accepts exactly what encoding/json accepts
// (RFC 8259; the differential fuzz test holds it to json.Valid), except
// strings that the grammar allows but that are not Unicode text: an
// invalid UTF-8 byte, and a \u escape of half a UTF-16 surrogate pair
// without its other half. encoding/json puts U+FFFD in their place, which
// would store a value the source never had and make different values
// (keys "a\ud800" and "a\udbff") one; the scanner refuses them instead
// (SyntaxError.BadText). Every other string decodes as encoding/json
// decodes it.
package jsonscan

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/txsink/txsink/changelog"
)

// Kind is the kind of a JSON value.
type Kind uint8

// The kinds of JSON values.
const (
	Invalid Kind = iota
	Null
	False
	True
	Number
	String
	Object
	Array
)

var kindNames = [...]string{"invalid", "null", "false", "true", "number", "string", "object", "array"}

// String returns the JSON name of the kind ("number", "object", ...).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Token is one JSON value the scanner read: its kind and where its text
// lies in the input.
type Token struct {
	Kind Kind
	// Start and End delimit the value's text in the input. For a String they
	// delimit the contents between the quotes.
	Start, End int
	// Plain is set for a String whose contents need no decoding (no escape,
	// valid UTF-8): its value is exactly input[Start:End].
	Plain bool
}

// SyntaxError is input the scanner refuses: what was wrong and at which
// byte offset.
type SyntaxError struct {
	Offset int
	Msg    string
	// BadText marks a string that JSON's grammar allows but that is not
	// text (see the package documentation): the record is well formed,
	// one of its values is not. Msg then says which escape or byte it is.
	BadText bool
	// Column is the column of a row object (see ScanRow) whose value
	// holds the bad text, "" when it is elsewhere (in a column's name,
	// or outside any row).
	Column string
}

// Error returns "invalid JSON at byte N: msg", or for BadText "invalid
// text at byte N: msg", preceded by `column "name": ` when Column is set.
func (e *SyntaxError) Error() string {
	what := "invalid JSON at byte "
	if e.BadText {
		what = "invalid text at byte "
	}
	if e.Column != "" {
		what = "column " + strconv.Quote(e.Column) + ": " + what
	}
	return what + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// MaxDepth is the deepest nesting of objects and arrays the scanner accepts,
// the same limit as encoding/json's. It bounds the recursion, so hostile
// input cannot exhaust the stack.
const MaxDepth = 10000

// Scanner reads JSON from a byte slice. The zero Scanner reads an empty
// input. It never modifies the input.
type Scanner struct {
	data  []byte
	pos   int
	names *Names
	mem   *changelog.Arena
	// tolerant passes over bad text (see TolerateBadText).
	tolerant bool
	// depth is the depth (see value) of the object whose members
	// NextKeyOf reads: 0 but while skipObject passes over an object
	// nested in another with it.
	depth int
	// keyAt is where the key text (past its opening quote) starts of the
	// member NextKeyOf last read the general way (white space, an escaped
	// key) or whose value it refused; -1 when the member's key itself was
	// refused. ScanRowOf names the row's columns by it. NextKeyOf's loop
	// for compact members does not set it: its other callers would pay
	// for the store, and ScanRowOf finds such a key before the ':'.
	keyAt int
}

// New returns a scanner positioned at the start of data.
func New(data []byte) Scanner { return Scanner{data: data} }

// UseNames makes Row intern the column names of the rows it reads in n.
func (s *Scanner) UseNames(n *Names) { s.names = n }

// UseArena makes Row build the rows it reads in a (see
// changelog.Arena), their text included; nil is the heap.
func (s *Scanner) UseArena(a *changelog.Arena) { s.mem = a }

// TolerateBadText makes the scanner pass over strings that are well-formed
// JSON but not text (SyntaxError.BadText) instead of refusing them; their
// Text then holds U+FFFD in place of each bad escape or byte. It is for a
// second, lenient look at a record already refused, to find what the
// refusal should name (its table): never for reading values.
func (s *Scanner) TolerateBadText() { s.tolerant = true }

// Arena returns the arena given to UseArena, nil for none.
func (s *Scanner) Arena() *changelog.Arena { return s.mem }

// Data returns the input the scanner reads.
func (s *Scanner) Data() []byte { return s.data }

// Pos returns the offset of the next unread byte.
func (s *Scanner) Pos() int { return s.pos }

func (s *Scanner) errf(msg string) error { return &SyntaxError{Offset: s.pos, Msg: msg} }

// stringErr is the error of a string scanString refused at offset end, with
// bad its reason: BadText when it is well-formed JSON that is not text.
func (s *Scanner) stringErr(end int, bad string) error {
	s.pos = end
	return &SyntaxError{Offset: end, Msg: bad, BadText: badTextAt(s.data, end) > 0}
}

// badTextAt returns how many bytes at d[i] are bad text that scanString
// refused: 1 for an invalid UTF-8 byte, 6 for a lone surrogate escape, 0
// when what it refused there is malformed JSON.
func badTextAt(d []byte, i int) int {
	switch {
	case i >= len(d):
		return 0
	case d[i] >= utf8.RuneSelf:
		return 1
	case d[i] == '\\' && i+6 <= len(d) && d[i+1] == 'u' && isHex4(d[i+2:i+6]):
		// scanString refuses a well-formed \u escape only for being half
		// a surrogate pair.
		return 6
	}
	return 0
}

// scanTolerant is scanString for a tolerant scanner: it passes over the
// bad text scanString refuses, and refuses only malformed JSON.
func scanTolerant(d []byte, i int) (end int, plain bool, bad string) {
	end, plain, bad = scanString(d, i)
	for bad != "" {
		n := badTextAt(d, end)
		if n == 0 {
			return end, false, bad
		}
		end, _, bad = scanString(d, end+n)
		plain = false
	}
	return end, plain, ""
}

func (s *Scanner) unexpected(what string) error {
	if s.pos >= len(s.data) {
		return s.errf("unexpected end of input, want " + what)
	}
	return s.errf("unexpected " + strconv.QuoteRune(rune(s.data[s.pos])) + ", want " + what)
}

// The scanning itself is done by functions of the input and an offset
// (skipWS, scanString, scanNumber), which keep both in registers; the
// methods load and store the scanner's position once per token.

// skipWS returns the offset of the first byte at or after i that is not
// white space. Records are mostly compact JSON, so the first test (no byte
// above ' ' is white space) usually ends it.
func skipWS(d []byte, i int) int {
	for i < len(d) && d[i] <= ' ' {
		if c := d[i]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			break
		}
		i++
	}
	return i
}

func (s *Scanner) skipSpace() { s.pos = skipWS(s.data, s.pos) }

// Peek returns the next byte that is not white space, without consuming
// it, or 0 at the end of the input.
func (s *Scanner) Peek() byte {
	s.skipSpace()
	if s.pos >= len(s.data) {
		return 0
	}
	return s.data[s.pos]
}

// Skip advances past n bytes, which the caller knows to hold a complete
// value (a cached schema it compared byte for byte).
func (s *Scanner) Skip(n int) { s.pos += n }

// End returns an error unless only white space remains.
func (s *Scanner) End() error {
	s.skipSpace()
	if s.pos < len(s.data) {
		return s.errf("unexpected " + strconv.QuoteRune(rune(s.data[s.pos])) + " after the top-level value")
	}
	return nil
}

// BeginObject consumes the '{' that opens an object: one right at the
// position (compact JSON) without a call, anything else by beginObject.
func (s *Scanner) BeginObject() error {
	if p := s.pos; p < len(s.data) && s.data[p] == '{' {
		s.pos = p + 1
		return nil
	}
	return s.beginObject()
}

// beginObject is BeginObject after white space, and its error.
func (s *Scanner) beginObject() error {
	s.skipSpace()
	if s.pos >= len(s.data) || s.data[s.pos] != '{' {
		return s.unexpected("'{'")
	}
	s.pos++
	return nil
}

// NextKey reads the key of the next member of the object being walked and
// the ':' after it. first says whether no member has been read yet. At the
// '}' that closes the object it consumes it and returns ok == false. The
// member's value is read next, with Value or a more specific method.
func (s *Scanner) NextKey(first bool) (key Token, ok bool, err error) {
	// The fast path, for compact JSON: '}', or a key right after the ','
	// (or the '{'), a plain or escaped string, and ':' right after it.
	d, i := s.data[:len(s.data):len(s.data)], s.pos // cap(d) == len(d), as in skipMembers
	if i < len(d) {
		switch c := d[i]; {
		case c == '}':
			s.pos = i + 1
			return Token{}, false, nil
		case c == ',' && !first:
			i++
		}
		if i < len(d) && d[i] == '"' && (i > s.pos || first) {
			// A plain key whose closing quote is in its first eight
			// bytes (most are) is read without a call.
			if i+9 <= len(d) {
				if m := special8(binary.LittleEndian.Uint64(d[i+1:])); m != 0 {
					if end := i + 1 + bits.TrailingZeros64(m)>>3; d[end] == '"' && end+1 < len(d) && d[end+1] == ':' {
						s.pos = end + 2
						return Token{Kind: String, Start: i + 1, End: end, Plain: true}, true, nil
					}
				}
			}
			end, plain, bad := scanString(d, i+1)
			if bad == "" && end+1 < len(d) && d[end+1] == ':' {
				s.pos = end + 2
				return Token{Kind: String, Start: i + 1, End: end, Plain: plain}, true, nil
			}
		}
	}
	return s.nextKey(first)
}

// nextKey is NextKey for any input: white space anywhere, and errors.
func (s *Scanner) nextKey(first bool) (key Token, ok bool, err error) {
	d := s.data
	i := skipWS(d, s.pos)
	if i >= len(d) {
		s.pos = i
		return Token{}, false, s.unexpected("'\"' or '}'")
	}
	switch c := d[i]; {
	case c == '}':
		s.pos = i + 1
		return Token{}, false, nil
	case !first:
		if c != ',' {
			s.pos = i
			return Token{}, false, s.unexpected("',' or '}'")
		}
		i = skipWS(d, i+1)
	}
	if i >= len(d) || d[i] != '"' {
		s.pos = i
		return Token{}, false, s.unexpected("'\"' (an object key)")
	}
	end, plain, bad := scanString(d, i+1)
	if bad != "" && s.tolerant {
		end, plain, bad = scanTolerant(d, i+1)
	}
	if bad != "" {
		return Token{}, false, s.stringErr(end, bad)
	}
	key = Token{Kind: String, Start: i + 1, End: end, Plain: plain}
	i = skipWS(d, end+1)
	if i >= len(d) || d[i] != ':' {
		s.pos = i
		return Token{}, false, s.unexpected("':'")
	}
	s.pos = i + 1
	return key, true, nil
}

// NextKeyIn is NextKey for an object of which only the members named by
// keys are wanted. It passes over the other members, checking them as
// NextKey and Value would, and stops after the key and ':' of the first
// member whose key (decoded) is one of keys, returning its index; the
// member's value is read next. At the '}' that closes the object it
// consumes it and returns ok == false. first says whether no member has
// been read yet.
//
// Passing over members is most of the work of reading a block such as
// Debezium's "source", of which a decoder wants two or three of fifteen
// members, so the members of compact JSON with plain keys and scalar
// values are passed over in one loop, without a Token, a call for each
// member or a comparison of each key; anything else (white space, an
// escaped key, an object or array value, an error) is left to NextKey and
// Value, from the start of the member, so the errors are theirs at the
// same offsets.
//
// It compares each member's key with each of keys; a caller that walks
// many objects for the same keys makes them once with NewKeys and calls
// NextKeyOf, which finds a key with one look in a table.
func (s *Scanner) NextKeyIn(first bool, keys []string) (k int, ok bool, err error) {
	ks := Keys{names: keys, lens: keyLens(keys)}
	return s.NextKeyOf(first, &ks)
}

// Keys is a list of wanted keys made once, for NextKeyOf: a caller that
// walks many objects for the same keys (a format's record fields, a block
// such as Debezium's "source") has each key found by one look in a table
// and one comparison of words, instead of a comparison with each key.
type Keys struct {
	names []string
	// table holds the keys at the slots keyHash with seed gives them, all
	// different; nil when no seed tells them apart (or a key is empty),
	// and Find compares each key.
	table *keyTable
	seed  uint64
	// lens has bit n set when a key is n bytes long: a key of another
	// length below 64 is passed over without a look in the table.
	lens uint64
}

// keyTable is a Keys' table: at each slot the key that hashes to it, as
// its first 8 bytes (a little-endian word, zero-padded), its last 8 when
// it is longer, its length (0 for no key) and whole, and its index.
type keyTable struct {
	words [keySlots]uint64
	tails [keySlots]uint64
	lens  [keySlots]uint8
	index [keySlots]uint8
	names [keySlots]string
}

// keySlots is the size of a keyTable, for up to maxKeys keys.
const (
	keySlots = 256
	maxKeys  = keySlots / 4
)

// NewKeys returns the Keys names, in the order of their indexes.
func NewKeys(names ...string) Keys {
	k := Keys{names: names, lens: keyLens(names)}
	if len(names) > maxKeys {
		return k
	}
	for _, w := range names {
		if w == "" || len(w) > 255 {
			return k
		}
	}
	t := new(keyTable)
seeds:
	for try := uint64(1); try <= 1000; try++ {
		seed := splitmix(try) | 1
		*t = keyTable{}
		for i, w := range names {
			h := keyHash(seed, keyWord([]byte(w)), keyTail([]byte(w)), len(w))
			if t.lens[h] != 0 {
				continue seeds
			}
			t.words[h], t.lens[h], t.index[h], t.names[h] = keyWord([]byte(w)), uint8(len(w)), uint8(i), w
			t.tails[h] = keyTail([]byte(w))
		}
		k.table, k.seed = t, seed
		return k
	}
	return k
}

// splitmix returns the x-th number of the SplitMix64 sequence: seeds
// for a Keys table that differ in all their bits, so that keys colliding
// under one seed are unlikely to collide under the next.
func splitmix(x uint64) uint64 {
	x *= 0x9E3779B97F4A7C15
	x = (x ^ x>>30) * 0xBF58476D1CE4E5B9
	x = (x ^ x>>27) * 0x94D049BB133111EB
	return x ^ x>>31
}

// keyLens is Keys.lens for keys.
func keyLens(keys []string) uint64 {
	var lens uint64
	for _, w := range keys {
		if len(w) < 64 {
			lens |= 1 << len(w)
		}
	}
	return lens
}

// keyMasks[n] keeps the first n bytes of a little-endian word.
var keyMasks = [8]uint64{0, 0xff, 0xffff, 0xffffff, 0xffffffff, 0xffffffffff, 0xffffffffffff, 0xffffffffffffff}

// keyWord is the first 8 bytes of key as a little-endian word, zero-padded.
func keyWord(key []byte) uint64 {
	var b [8]byte
	copy(b[:], key)
	return binary.LittleEndian.Uint64(b[:])
}

// keyTail is the last 8 bytes of a key longer than 8 as a little-endian
// word, 0 for a shorter one.
func keyTail(key []byte) uint64 {
	if len(key) <= 8 {
		return 0
	}
	return binary.LittleEndian.Uint64(key[len(key)-8:])
}

// keyHash places a key of n bytes whose keyWord is w and keyTail tail in a
// keyTable.
func keyHash(seed, w, tail uint64, n int) uint8 {
	return uint8((w ^ bits.RotateLeft64(tail, 29) ^ uint64(n)) * seed >> 56)
}

// Names returns the keys, in the order of their indexes.
func (k *Keys) Names() []string { return k.names }

// Find returns the index of key (decoded, as Scanner.Bytes gives it) in
// k, or -1.
func (k *Keys) Find(key []byte) int {
	t := k.table
	if t == nil {
		return k.scan(key)
	}
	if len(key) == 0 {
		return -1 // the table holds no empty key
	}
	h := keyHash(k.seed, keyWord(key), keyTail(key), len(key))
	if t.lens[h] != 0 && t.names[h] == string(key) {
		return int(t.index[h])
	}
	return -1
}

// FindKey returns the index in keys of the key token s read, or -1: Find,
// comparing a plain key of up to 16 bytes as words, as NextKeyOf does.
func (s *Scanner) FindKey(keys *Keys, key Token) int {
	d, n := s.data, uint(key.End-key.Start)
	if t := keys.table; t != nil && key.Plain && n-1 < 16 && key.Start+8 <= len(d) {
		w, tail := binary.LittleEndian.Uint64(d[key.Start:key.Start+8]), uint64(0)
		if n < 8 {
			w &= keyMasks[n]
		} else if n > 8 {
			tail = binary.LittleEndian.Uint64(d[key.End-8 : key.End])
		}
		if h := keyHash(keys.seed, w, tail, int(n)); t.words[h] == w && t.tails[h] == tail && uint(t.lens[h]) == n {
			return int(t.index[h])
		}
		return -1
	}
	return keys.Find(s.Bytes(key))
}

// scan is Find by comparing key with each key, for keys without slots.
//
//go:noinline
func (k *Keys) scan(key []byte) int {
	for i, w := range k.names {
		if string(key) == w {
			return i
		}
	}
	return -1
}

// NextKeyOf is NextKeyIn for keys made once.
func (s *Scanner) NextKeyOf(first bool, keys *Keys) (k int, ok bool, err error) {
	i := s.pos
	for ; ; first = false {
		at, k, st := skipMembers(s.data, i, first, keys)
		switch st {
		case skipFound:
			s.pos = at
			return k, true, nil
		case skipEnd:
			s.pos = at
			return -1, false, nil
		case skipValue:
			// A value skipMembers does not pass over, after a key it
			// read and did not find: read it as the general way would
			// after reading the key again, without reading the key again.
			s.pos, s.keyAt = at, k
			if _, err := s.value(s.depth); err != nil {
				return -1, false, err
			}
			i = s.pos
			continue
		case skipLookup:
			// A key skipMembers read but could not look up without a
			// call: the value follows its ':' at at+2.
			if k := keys.Find(s.data[k:at]); k >= 0 {
				s.pos = at + 2
				return k, true, nil
			}
			s.pos, s.keyAt = at+2, k
			if _, err := s.value(s.depth); err != nil {
				return -1, false, err
			}
			i = s.pos
			continue
		}
		// Anything else: one member the general way (the first only if
		// skipMembers passed over none).
		s.pos, s.keyAt = at, -1
		key, ok, err := s.NextKey(first && at == i)
		if err != nil || !ok {
			return -1, ok, err
		}
		// keyAt is also the member whose value is in error below, so
		// that ScanRowOf can name its column.
		s.keyAt = key.Start
		if len(keys.names) > 0 {
			if k := s.FindKey(keys, key); k >= 0 {
				return k, true, nil
			}
		}
		if _, err := s.value(s.depth); err != nil {
			return -1, false, err
		}
		i = s.pos
	}
}

// noKeys is the Keys of no key, for skipObject.
var noKeys Keys

// What skipMembers stopped at.
const (
	// skipMember: the member at the offset is left to NextKey and Value.
	skipMember = iota
	// skipFound: the key of the given index was found; the offset is
	// past its ':'.
	skipFound
	// skipEnd: the object ended; the offset is past its '}'.
	skipEnd
	// skipValue: the value at the offset, after a key not wanted that
	// starts at the given offset, is left to Value.
	skipValue
	// skipLookup: the plain key from the given offset up to the offset
	// (its closing quote, ':' next) is to be looked up with Keys.Find.
	skipLookup
)

// skipMembers is NextKeyOf's loop: from d[i], the ',' before a member
// (or, first, its key) or the '}' that closes the object, it passes over
// the members of compact JSON with plain keys and scalar values whose
// keys are not among keys, and stops at a member whose key is, at the
// object's end, or at anything it does not read itself (white space, an
// escape or a multi-byte character in a key or a string, an object or an
// array, a malformed value, a key or a value too near the input's end for
// its words to be read), which it leaves to NextKey and Value from the
// start of the member or of its value, so that the errors are theirs at
// the same offsets. It calls nothing but numberEnd, for a number with a
// fraction or an exponent (rare in the blocks it passes over): in Go a
// call clobbers every register, and a loop with calls in its slow paths
// keeps its state on the stack for all of them.
func skipMembers(d []byte, i int, first bool, keys *Keys) (at, k int, st int) {
	// With cap(d) == len(d) known, a slice of d needs no test of its
	// end against cap(d): -170 instructions per "source" block.
	d = d[:len(d):len(d)]
	j := i + 1 // the key's opening quote
	switch {
	case i+2 <= len(d) && binary.LittleEndian.Uint16(d[i:i+2]) == commaQuote && !first:
	case i < len(d) && d[i] == '"' && first:
		j = i
	case i < len(d) && d[i] == '}':
		return i + 1, -1, skipEnd
	default:
		return i, -1, skipMember
	}
	lens := keys.lens
	for {
		// The key: plain bytes up to the first byte that is not, which
		// must be its closing quote, ':' next. A key of up to 15 bytes
		// (most) ends in its first two words, read with one bounds
		// check.
		if len(d)-j < 19 {
			return i, -1, skipMember
		}
		b := (*[18]byte)(d[j+1:])
		end := 0
		var c byte // the value's first byte, in b after a short key
		if m := special8(binary.LittleEndian.Uint64(b[:8])); m != 0 {
			n := int(bits.TrailingZeros64(m)>>3) & 7
			if b[n] != '"' || b[n+1] != ':' {
				return i, -1, skipMember
			}
			end, c = j+1+n, b[n+2]
		} else if m := special8(binary.LittleEndian.Uint64(b[8:16])); m != 0 {
			n := int(bits.TrailingZeros64(m)>>3) & 7
			if b[8+n] != '"' || b[9+n] != ':' {
				return i, -1, skipMember
			}
			end, c = j+9+n, b[10+n]
		} else {
			for end = j + 17; ; end += 8 {
				if end+8 > len(d) {
					return i, -1, skipMember
				}
				if m := special8(binary.LittleEndian.Uint64(d[end : end+8])); m != 0 {
					end += bits.TrailingZeros64(m) >> 3
					break
				}
			}
			if end+3 > len(d) || binary.LittleEndian.Uint16(d[end:end+2]) != quoteColon {
				return i, -1, skipMember
			}
			c = d[end+2]
		}
		if n := uint(end - j - 1); n >= 64 || lens>>n&1 != 0 {
			// A key of a wanted length is looked up in the table, a key
			// of up to 16 bytes compared as its first and last 8 (d
			// holds 8 bytes from its start: b).
			t := keys.table
			if t == nil || n-1 >= 16 {
				return end, j + 1, skipLookup
			}
			w, tail := binary.LittleEndian.Uint64(b[:8]), uint64(0)
			if n < 8 {
				w &= keyMasks[n]
			} else if n > 8 {
				tail = binary.LittleEndian.Uint64(d[end-8 : end])
			}
			if h := keyHash(keys.seed, w, tail, int(n)); t.words[h] == w && t.tails[h] == tail && uint(t.lens[h]) == n {
				return end + 2, int(t.index[h]), skipFound
			}
		}
		// The value of a member not wanted, from v up to p.
		v, p := end+2, 0
		switch {
		case c == '"':
			// Plain bytes eight at a time up to the first byte that is
			// not, which must be the closing quote.
			for p = v + 1; ; p += 8 {
				if p+8 > len(d) {
					return v, j + 1, skipValue
				}
				if m := special8(binary.LittleEndian.Uint64(d[p : p+8])); m != 0 {
					p += bits.TrailingZeros64(m) >> 3
					break
				}
			}
			if d[p] != '"' {
				return v, j + 1, skipValue
			}
			p++
		case c == 'n' && v+4 <= len(d) && binary.LittleEndian.Uint32(d[v:v+4]) == litNull,
			c == 't' && v+4 <= len(d) && binary.LittleEndian.Uint32(d[v:v+4]) == litTrue:
			p = v + 4
		case c == 'f' && v+5 <= len(d) && binary.LittleEndian.Uint32(d[v:v+4]) == litFals && d[v+4] == 'e':
			p = v + 5
		case c-'0' < 10 || c == '-':
			// A number per the grammar (see scanNumber); anything
			// else is left to scanNumber, which says what is wrong.
			p = v
			if c == '-' {
				p++
			}
			switch {
			case p < len(d) && d[p] == '0':
				p++
			case p < len(d) && d[p]-'1' < 9:
				p = skipDigits(d, p+1) // inlined: no call
			default:
				return v, j + 1, skipValue
			}
			if p < len(d) && (d[p] == '.' || d[p]|0x20 == 'e') {
				// A fraction or an exponent, rare in the blocks passed
				// over: the whole number again, with a call.
				if p = numberEnd(d, v); p == v {
					return v, j + 1, skipValue
				}
			}
		default:
			return v, j + 1, skipValue
		}
		// The next member's ',' and key's quote, or the object's end.
		if p+2 <= len(d) && binary.LittleEndian.Uint16(d[p:p+2]) == commaQuote {
			i, j = p, p+1
			continue
		}
		if p < len(d) && d[p] == '}' {
			return p + 1, -1, skipEnd
		}
		return p, -1, skipMember
	}
}

// numberEnd returns the offset just past the number at d[i] per the JSON
// grammar (see scanNumber), or i when there is none there: scanNumber then
// says what is wrong. It calls nothing.
func numberEnd(d []byte, i int) int {
	p := i
	if p < len(d) && d[p] == '-' {
		p++
	}
	switch {
	case p < len(d) && d[p] == '0':
		p++
	case p < len(d) && d[p]-'1' < 9:
		p++
		for p < len(d) && d[p]-'0' < 10 {
			p++
		}
	default:
		return i
	}
	if p < len(d) && d[p] == '.' {
		p++
		if p >= len(d) || d[p]-'0' >= 10 {
			return i
		}
		for p < len(d) && d[p]-'0' < 10 {
			p++
		}
	}
	if p < len(d) && d[p]|0x20 == 'e' {
		p++
		if p < len(d) && (d[p] == '+' || d[p] == '-') {
			p++
		}
		if p >= len(d) || d[p]-'0' >= 10 {
			return i
		}
		for p < len(d) && d[p]-'0' < 10 {
			p++
		}
	}
	return p
}

// commaQuote and quoteColon are `,"` and `":` as little-endian 16-bit
// words, for two bytes compared in one step.
const (
	commaQuote = ',' | '"'<<8
	quoteColon = '"' | ':'<<8
)

// Value reads one complete value. Objects and arrays are checked and
// skipped; the token spans their whole text.
func (s *Scanner) Value() (Token, error) { return s.value(0) }

func (s *Scanner) value(depth int) (Token, error) {
	d := s.data[:len(s.data):len(s.data)] // cap(d) == len(d), as in skipMembers
	start := skipWS(d, s.pos)
	s.pos = start
	if start >= len(d) {
		return Token{}, s.unexpected("a value")
	}
	switch c := d[start]; c {
	case '"':
		// A plain string whose closing quote is in its first two words
		// (most that decoders read: names, ids, enums) without a call;
		// scanString reads the others from the first byte that is not
		// plain (the bytes before it are, so its result and its errors
		// are the same).
		p := start + 1
		if p+16 <= len(d) {
			m := special8(binary.LittleEndian.Uint64(d[p : p+8]))
			if m == 0 {
				p += 8
				m = special8(binary.LittleEndian.Uint64(d[p : p+8]))
			}
			if m != 0 {
				if p += bits.TrailingZeros64(m) >> 3; d[p] == '"' {
					s.pos = p + 1
					return Token{Kind: String, Start: start + 1, End: p, Plain: true}, nil
				}
			}
		}
		end, plain, bad := scanString(d, p)
		if bad != "" && s.tolerant {
			end, plain, bad = scanTolerant(d, start+1)
		}
		if bad != "" {
			return Token{}, s.stringErr(end, bad)
		}
		s.pos = end + 1
		return Token{Kind: String, Start: start + 1, End: end, Plain: plain}, nil
	case '{':
		if err := s.skipObject(depth + 1); err != nil {
			return Token{}, err
		}
		return Token{Kind: Object, Start: start, End: s.pos}, nil
	case '[':
		if err := s.skipArray(depth + 1); err != nil {
			return Token{}, err
		}
		return Token{Kind: Array, Start: start, End: s.pos}, nil
	case 't':
		return s.literal("true", True)
	case 'f':
		return s.literal("false", False)
	case 'n':
		return s.literal("null", Null)
	default:
		if c-'1' < 9 {
			// An integer from 1 up (most numbers decoders read: a time,
			// an order, a count) without a call; scanNumber reads a
			// fraction or an exponent, from the start.
			if p := skipDigits(d, start+1); p >= len(d) || d[p] != '.' && d[p]|0x20 != 'e' {
				s.pos = p
				return Token{Kind: Number, Start: start, End: p}, nil
			}
		}
		if c == '-' || (c >= '0' && c <= '9') {
			end, bad := scanNumber(d, start)
			s.pos = end
			if bad != "" {
				return Token{}, s.errf(bad)
			}
			return Token{Kind: Number, Start: start, End: end}, nil
		}
		return Token{}, s.unexpected("a value")
	}
}

func (s *Scanner) literal(lit string, k Kind) (Token, error) {
	start := s.pos
	if len(s.data)-s.pos < len(lit) || string(s.data[s.pos:s.pos+len(lit)]) != lit {
		return Token{}, s.errf("invalid literal, want " + lit)
	}
	s.pos += len(lit)
	return Token{Kind: k, Start: start, End: s.pos}, nil
}

// skipObject passes over the object at the scanner's position, at depth
// depth, checking it: its members in NextKeyOf's loop, for no key, which
// ends at the object's end or at an error, reading the values it does not
// pass over itself at depth (s.depth). The member keyAt names is the
// caller's again after it (ScanRowOf names a column by it).
func (s *Scanner) skipObject(depth int) error {
	if depth > MaxDepth {
		return s.errf("nesting deeper than " + strconv.Itoa(MaxDepth))
	}
	s.pos++ // '{'
	keyAt, outer := s.keyAt, s.depth
	s.depth = depth
	_, _, err := s.NextKeyOf(true, &noKeys)
	s.keyAt, s.depth = keyAt, outer
	return err
}

func (s *Scanner) skipArray(depth int) error {
	if depth > MaxDepth {
		return s.errf("nesting deeper than " + strconv.Itoa(MaxDepth))
	}
	s.pos++ // '['
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return nil
	}
	for {
		if _, err := s.value(depth); err != nil {
			return err
		}
		s.skipSpace()
		if s.pos >= len(s.data) {
			return s.unexpected("',' or ']'")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return s.unexpected("',' or ']'")
		}
	}
}

// scanString scans the contents of a string from d[i], just past its
// opening quote, and checks its escapes. It returns the offset of the
// closing quote and whether the contents are plain (no escape: the value is
// the text itself); on error, bad says what is wrong at offset end.
func scanString(d []byte, i int) (end int, plain bool, bad string) {
	d = d[:len(d):len(d)] // cap(d) == len(d), as in skipMembers
	plain = true
	for {
		// The common case: eight plain bytes at a time, then one table
		// lookup per byte for the tail, up to the first byte that needs a
		// look; most strings end at that byte, their closing quote.
		for i+8 <= len(d) {
			if m := special8(binary.LittleEndian.Uint64(d[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				goto special
			}
			i += 8
		}
		for i < len(d) && plainByte[d[i]] {
			i++
		}
		if i == len(d) {
			return i, false, "unterminated string"
		}
	special:
		switch c := d[i]; {
		case c == '"':
			return i, plain, ""
		case c == '\\':
			plain = false
			if i+1 >= len(d) {
				return i, false, "unterminated escape in string"
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(d) || !isHex4(d[i+2:i+6]) {
					return i, false, `invalid \u escape in string`
				}
				if d[i+2]|0x20 == 'd' && d[i+3] >= '8' {
					// U+D800 to U+DFFF: half of a UTF-16 surrogate
					// pair ('8' to '9', 'A' to 'F' and 'a' to 'f' all
					// sort after '8'), whole only with its other half.
					n, bad := pairAt(d, i)
					if bad != "" {
						return i, false, bad
					}
					i += n
					continue
				}
				i += 6
			default:
				return i, false, "invalid escape " + strconv.Quote(string(d[i:i+2])) + " in string"
			}
		case c < 0x20:
			return i, false, "control character in string"
		default:
			// special8 flags every byte of a multi-byte sequence.
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				// encoding/json would put U+FFFD in its place; txsink
				// never changes a value silently, so the record is refused.
				return i, false, fmt.Sprintf("invalid UTF-8 byte 0x%02x in string", d[i])
			}
			i += size
		}
	}
}

// pairAt checks the surrogate escape at d[i] (a well-formed \uD800 to
// \uDFFF) and returns how many bytes to pass over: 12 for a high
// surrogate followed by a low one, which together are one character; 6
// when the input ends or a malformed escape follows, for the scan to
// refuse that as malformed JSON; else why it is not text. encoding/json
// would decode a lone half as U+FFFD; txsink refuses it, like an invalid
// UTF-8 byte.
func pairAt(d []byte, i int) (n int, bad string) {
	esc := string(d[i : i+6])
	if hi, _ := hexRune(d[i+2:]); hi >= 0xDC00 {
		return 0, "lone surrogate " + esc + " in string (a UTF-16 low surrogate with no high surrogate before it is not a character)"
	}
	j := i + 6
	if j >= len(d) || d[j] == '\\' && !escapeAt(d, j) {
		return 6, ""
	}
	if d[j] == '\\' && d[j+1] == 'u' {
		if lo, _ := hexRune(d[j+2:]); lo >= 0xDC00 && lo <= 0xDFFF {
			return 12, ""
		}
	}
	return 0, "lone surrogate " + esc + " in string (a UTF-16 high surrogate not followed by a low surrogate is not a character)"
}

// escapeAt reports whether d[j], a backslash, starts a well-formed escape.
func escapeAt(d []byte, j int) bool {
	if j+1 >= len(d) {
		return false
	}
	switch d[j+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		return j+6 <= len(d) && isHex4(d[j+2:j+6])
	}
	return false
}

// nonDigit8 returns a mask whose lowest set bit is the high bit of the
// first of the eight bytes of x (little-endian) that is not an ASCII
// digit, 0 when all eight are digits. A byte's high bit is set when it is
// at or above 0x80 (x), above '9' (x+0x46 reaches 0x80; a carry out of a
// byte happens only for one at or above 0xBA) or below '0' (x-0x30
// borrows), so only the lowest set bit is exact, as in special8.
func nonDigit8(x uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	return ((x + lo*0x46) | (x - lo*'0') | x) & hi
}

// litNull, litTrue and litFals are "null", "true" and "fals" as
// little-endian words, for a literal compared in one step.
const (
	litNull = 'n' | 'u'<<8 | 'l'<<16 | 'l'<<24
	litTrue = 't' | 'r'<<8 | 'u'<<16 | 'e'<<24
	litFals = 'f' | 'a'<<8 | 'l'<<16 | 's'<<24
)

// special8 returns a mask whose lowest set bit is the high bit of the
// first of the eight bytes of x (little-endian) that is not plain: '"',
// '\\', a control character or a byte of a multi-byte UTF-8 sequence; 0 when
// all eight are plain. Bits above the lowest may be false alarms, so only
// the lowest is used: a byte's high bit is set when it is at or above 0x80
// (x), below 0x20 (x-0x20, which then borrows), or '"' or '\\' (its XOR
// with the quote or backslash is 0, whose decrement borrows); below the
// first special byte nothing borrows, and a decrement that sets a high bit
// without borrowing (an XOR at or above 0x81, x-0x20 at or above 0x80)
// does it only for a byte at or above 0x80, which x flags anyway.
func special8(x uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	q := x ^ (lo * '"')
	b := x ^ (lo * '\\')
	return ((q - lo) | (b - lo) | (x - lo*0x20) | x) & hi
}

// Special8 is special8, for the packages that read JSON text in place
// beside the scanner (jsonrecord): one definition of "plain" for both.
func Special8(x uint64) uint64 { return special8(x) }

// NonDigit8 is nonDigit8, for the same packages.
func NonDigit8(x uint64) uint64 { return nonDigit8(x) }

// plainByte marks the bytes that stand for themselves inside a string:
// ASCII other than control characters, '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex4(b []byte) bool {
	for _, c := range b[:4] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// scanNumber scans a number at d[i] per the JSON grammar
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and returns the offset
// just past it; on error, bad says what is wrong at offset end.
func scanNumber(d []byte, i int) (end int, bad string) {
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && isDigit(d[i]):
		i = skipDigits(d, i+1)
	default:
		return i, "invalid number: want a digit"
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || !isDigit(d[i]) {
			return i, "invalid number: want a digit after '.'"
		}
		i = skipDigits(d, i+1)
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || !isDigit(d[i]) {
			return i, "invalid number: want a digit in the exponent"
		}
		i = skipDigits(d, i+1)
	}
	return i, ""
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// skipDigits returns the offset of the first byte at or after i that is not
// a digit: eight at a time while 8 bytes are left (a time in epoch
// milliseconds has 13 digits), then one at a time.
func skipDigits(d []byte, i int) int {
	d = d[:len(d):len(d)] // cap(d) == len(d), as in skipMembers
	for i+8 <= len(d) {
		if m := nonDigit8(binary.LittleEndian.Uint64(d[i : i+8])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(d) && isDigit(d[i]) {
		i++
	}
	return i
}

// Text returns the value of a String token (decoded) or the text of any
// other token.
func (s *Scanner) Text(t Token) string {
	if t.Kind == String && !t.Plain {
		return unescape(s.data[t.Start:t.End], s.tolerant)
	}
	return string(s.data[t.Start:t.End])
}

// Bytes returns the value of a String token (decoded) or the text of any
// other token. For a plain string and for other tokens it is a slice of the
// input, not a copy, so `switch string(s.Bytes(key))` matches keys without
// allocating.
func (s *Scanner) Bytes(t Token) []byte {
	if t.Kind == String && !t.Plain {
		return s.unescaped(t)
	}
	return s.data[t.Start:t.End]
}

// unescaped returns the decoded value of String token t. It is a function
// of its own, never inlined, so that Bytes, on every key's path, is small
// enough to inline.
//
//go:noinline
func (s *Scanner) unescaped(t Token) []byte {
	return []byte(unescape(s.data[t.Start:t.End], s.tolerant))
}

// Equal reports whether the String token t holds exactly lit. It does not
// allocate for plain strings.
func (s *Scanner) Equal(t Token, lit string) bool {
	if t.Kind != String {
		return false
	}
	if t.Plain {
		return string(s.data[t.Start:t.End]) == lit
	}
	return unescape(s.data[t.Start:t.End], s.tolerant) == lit
}

// Unescape decodes the contents of a JSON string (the bytes between the
// quotes, already checked by the scanner) the way encoding/json does:
// escapes are resolved and surrogate pairs combined. Text the scanner
// checked holds neither invalid UTF-8 nor lone surrogates; in text it did
// not check, those become U+FFFD.
func Unescape(b []byte) string { return unescape(b, false) }

// unescape is Unescape; with shown, a tolerant scanner's, it writes a
// lone surrogate escape as it is written and an invalid UTF-8 byte as
// \xHH instead of U+FFFD, so that a refusal names what the record holds.
func unescape(b []byte, shown bool) string {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\\' && i+1 < len(b):
			switch b[i+1] {
			case '"', '\\', '/':
				out = append(out, b[i+1])
				i += 2
			case 'b':
				out = append(out, '\b')
				i += 2
			case 'f':
				out = append(out, '\f')
				i += 2
			case 'n':
				out = append(out, '\n')
				i += 2
			case 'r':
				out = append(out, '\r')
				i += 2
			case 't':
				out = append(out, '\t')
				i += 2
			case 'u':
				r, ok := hexRune(b[i+2:])
				if !ok {
					// Not reached for scanner-checked input; keep the text.
					out = append(out, b[i:i+2]...)
					i += 2
					continue
				}
				i += 6
				if utf16.IsSurrogate(r) {
					r2, ok2 := rune(-1), false
					if i+1 < len(b) && b[i] == '\\' && b[i+1] == 'u' {
						r2, ok2 = hexRune(b[i+2:])
					}
					if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
						r = dec
						i += 6
					} else if shown {
						out = append(out, b[i-6:i]...)
						continue
					} else {
						r = utf8.RuneError
					}
				}
				out = utf8.AppendRune(out, r)
			default:
				out = append(out, c)
				i++
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			switch {
			case r == utf8.RuneError && size == 1 && shown:
				out = append(out, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
			case r == utf8.RuneError && size == 1:
				out = utf8.AppendRune(out, utf8.RuneError)
			default:
				out = append(out, b[i:i+size]...)
			}
			i += size
		}
	}
	return string(out)
}

const hexDigits = "0123456789abcdef"

func hexRune(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// IsNumber reports whether s is a JSON number, so text meant to be written
// as one can be checked without allocating.
func IsNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() bool {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > j
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case !digits():
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(s)
}
