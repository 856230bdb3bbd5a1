package jsonscan

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/txsink/txsink/changelog"
)

// member is one object member found by Row: the key and the value tokens.
type member struct {
	key, val Token
}

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

// find returns the list whose names are the keys of ms, nil if none.
func (n *Names) find(data []byte, ms []member) []string {
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
			if string(data[ms[i].key.Start:ms[i].key.End]) != l[i] {
				continue next
			}
		}
		return l
	}
	return nil
}

// add makes and keeps a list of the keys of ms, which are plain strings
// of data naming distinct columns. The names share one allocation of their
// own, so the list keeps no record's text alive.
func (n *Names) add(data []byte, ms []member) []string {
	size := 0
	for _, m := range ms {
		size += m.key.End - m.key.Start
	}
	buf := make([]byte, 0, size)
	for _, m := range ms {
		buf = append(buf, data[m.key.Start:m.key.End]...)
	}
	all := string(buf)
	l := make([]string, len(ms))
	at := 0
	for i, m := range ms {
		l[i] = all[at : at+m.key.End-m.key.Start]
		at += m.key.End - m.key.Start
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
		ms = append(ms, member{key, val})
	}
	if len(ms) == 0 {
		return changelog.Row{}, nil
	}
	img := string(s.data[start:s.pos])
	var names []string
	if s.names != nil {
		names = s.names.find(s.data, ms)
	}
	fresh := names == nil
	if fresh {
		names = make([]string, len(ms))
		for i, m := range ms {
			names[i] = s.substr(img, start, m.key)
		}
		if name, dup := Duplicate(names); dup {
			return changelog.Row{}, fmt.Errorf("%w %q", ErrDuplicateColumn, name)
		}
		if s.names != nil && plainKeys(ms) {
			names = s.names.add(s.data, ms)
		}
	}
	values := make([]changelog.Value, len(ms))
	// The headers of the string and number values, boxed in place (see
	// boxAt): filled first, then pointed to, never written again.
	n := 0
	for _, m := range ms {
		if m.val.Kind == String || m.val.Kind == Number {
			n++
		}
	}
	hdrs := make([]string, n)
	n = 0
	for _, m := range ms {
		switch m.val.Kind {
		case Number:
			hdrs[n] = img[m.val.Start-start : m.val.End-start]
			n++
		case String:
			hdrs[n] = s.substr(img, start, m.val)
			n++
		}
	}
	n = 0
	for i, m := range ms {
		switch m.val.Kind {
		case Null:
			// nil
		case True:
			values[i] = true
		case False:
			values[i] = false
		case Number:
			values[i] = boxAt(numberType, &hdrs[n])
			n++
		case String:
			values[i] = boxAt(stringType, &hdrs[n])
			n++
		case Object, Array:
			values[i] = changelog.JSON(img[m.val.Start-start : m.val.End-start])
		}
	}
	return changelog.Row{Names: names, Values: values}, nil
}

// plainKeys reports whether every key of ms is a plain string, whose name
// is its text in the input.
func plainKeys(ms []member) bool {
	for _, m := range ms {
		if !m.key.Plain {
			return false
		}
	}
	return true
}

// substr returns the value of String token t, a substring of img (the copy
// of the input from offset base) when t is plain.
func (s *Scanner) substr(img string, base int, t Token) string {
	if t.Plain {
		return img[t.Start-base : t.End-base]
	}
	return Unescape(s.data[t.Start:t.End])
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
