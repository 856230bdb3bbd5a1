package jsonscan

import (
	"errors"
	"fmt"

	"github.com/txsink/txsink/changelog"
)

// member is one object member found by Row: the key and the value tokens.
type member struct {
	key, val Token
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
// of the values, which live as long as the row anyway.
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
	names := make([]string, len(ms))
	values := make([]changelog.Value, len(ms))
	for i, m := range ms {
		names[i] = s.substr(img, start, m.key)
		switch m.val.Kind {
		case Null:
			// nil
		case True:
			values[i] = true
		case False:
			values[i] = false
		case Number:
			values[i] = changelog.Number(img[m.val.Start-start : m.val.End-start])
		case String:
			values[i] = s.substr(img, start, m.val)
		case Object, Array:
			values[i] = changelog.JSON(img[m.val.Start-start : m.val.End-start])
		}
	}
	if name, dup := Duplicate(names); dup {
		return changelog.Row{}, fmt.Errorf("%w %q", ErrDuplicateColumn, name)
	}
	return changelog.Row{Names: names, Values: values}, nil
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
