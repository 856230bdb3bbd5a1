package jsonscan

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/txsink/txsink/changelog"
)

// member is one object member found by Row: where its key and value lie,
// as offsets from the row's opening brace. It is kept small (20 bytes, not
// the 64 of two Tokens) because Row keeps room for 32 on its stack, and
// that room is zeroed on every call.
type member struct {
	kStart, kEnd, vStart, vEnd uint32
	vKind                      Kind
	kPlain, vPlain             bool
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
	p atomic.Pointer[[][]string]
}

// maxNameLists bounds a Names; past it, it starts over. A table usually
// has one list per image, so the bound is reached only by a stream of many
// tables or ever-changing columns.
const maxNameLists = 64

// find returns the list whose names are the keys of ms, nil if none. row is
// the text the offsets of ms are from.
func (n *Names) find(row []byte, ms []member) []string {
	lists := n.p.Load()
	if lists == nil {
		return nil
	}
next:
	for _, l := range *lists {
		if len(l) != len(ms) {
			continue
		}
		for i := range ms {
			if string(row[ms[i].kStart:ms[i].kEnd]) != l[i] {
				continue next
			}
		}
		return l
	}
	return nil
}

// add makes and keeps a list of the keys of ms, which are plain strings
// of row naming distinct columns. The names share one allocation of their
// own, so the list keeps no record's text alive.
func (n *Names) add(row []byte, ms []member) []string {
	var buf []byte
	for _, m := range ms {
		buf = append(buf, row[m.kStart:m.kEnd]...)
	}
	all := string(buf)
	l := make([]string, len(ms))
	at := 0
	for i, m := range ms {
		l[i] = all[at : at+int(m.kEnd-m.kStart)]
		at += int(m.kEnd - m.kStart)
	}
	old := n.p.Load()
	var lists [][]string
	if old != nil && len(*old) < maxNameLists {
		lists = append(make([][]string, 0, len(*old)+1), *old...)
	}
	lists = append(lists, l)
	n.p.Store(&lists)
	return l
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
// the object's text is copied once into a string and the names and plain
// string and number values are substrings of it; the copy is about the size
// of the values, which live as long as the row anyway. The string and
// number values are boxed in one allocation per row (see boxAt). With
// UseNames, the names come from the Names instead: rows naming the same
// columns share one slice, which no one may modify (see changelog.Row).
//
// An object that names a column twice is an error wrapping
// ErrDuplicateColumn: encoding/json would keep the last value silently, and a
// row with an ambiguous column must not reach a database.
func (s *Scanner) Row() (changelog.Row, error) {
	if err := s.BeginObject(); err != nil {
		return changelog.Row{}, err
	}
	start := s.pos - 1
	var buf [32]member
	ms := buf[:0]
	for first := true; ; first = false {
		key, ok, err := s.NextKey(first)
		if err != nil {
			return changelog.Row{}, err
		}
		if !ok {
			break
		}
		val, err := s.value(0)
		if err != nil {
			return changelog.Row{}, err
		}
		if uint64(val.End-start) > maxRowBytes {
			return changelog.Row{}, s.errf("row object longer than 4 GiB")
		}
		ms = append(ms, member{
			kStart: uint32(key.Start - start), kEnd: uint32(key.End - start),
			vStart: uint32(val.Start - start), vEnd: uint32(val.End - start),
			vKind: val.Kind, kPlain: key.Plain, vPlain: val.Plain,
		})
	}
	if len(ms) == 0 {
		return changelog.Row{}, nil
	}
	text := s.data[start:s.pos]
	img := string(text)
	var names []string
	if s.names != nil {
		names = s.names.find(text, ms)
	}
	if names == nil {
		names = make([]string, len(ms))
		for i, m := range ms {
			names[i] = substr(img, m.kStart, m.kEnd, m.kPlain)
		}
		if name, dup := Duplicate(names); dup {
			return changelog.Row{}, fmt.Errorf("%w %q", ErrDuplicateColumn, name)
		}
		if s.names != nil && plainKeys(ms) {
			names = s.names.add(text, ms)
		}
	}
	values := make([]changelog.Value, len(ms))
	// The headers of the string and number values, boxed in place (see
	// boxAt): each is written once, then pointed to, never written again.
	// Nulls and booleans leave theirs unused, which costs less than
	// counting them first.
	hdrs := make([]string, len(ms))
	for i, m := range ms {
		switch m.vKind {
		case Null:
			// nil
		case True:
			values[i] = true
		case False:
			values[i] = false
		case Number:
			hdrs[i] = img[m.vStart:m.vEnd]
			values[i] = boxAt(numberType, &hdrs[i])
		case String:
			hdrs[i] = substr(img, m.vStart, m.vEnd, m.vPlain)
			values[i] = boxAt(stringType, &hdrs[i])
		case Object, Array:
			values[i] = changelog.JSON(img[m.vStart:m.vEnd])
		}
	}
	return changelog.Row{Names: names, Values: values}, nil
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

// substr returns the value of the string whose contents are img[start:end]:
// that substring itself when plain.
func substr(img string, start, end uint32, plain bool) string {
	if plain {
		return img[start:end]
	}
	return Unescape([]byte(img[start:end]))
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
