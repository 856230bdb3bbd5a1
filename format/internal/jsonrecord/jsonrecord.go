// Package jsonrecord holds the pieces every JSON changelog decoder needs
// alike — telling a tombstone, overlaying an update's old values, reusing
// table names between records, reading names and row images, and turning a
// refusal into a *format.Error — so each format package keeps only what is
// its own.
package jsonrecord

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/internal/jsonscan"
)

// IsTombstone reports whether a record holds no event: empty, white space,
// or the JSON literal null (a Kafka tombstone, or a deleted key's marker).
func IsTombstone(data []byte) bool {
	if len(data) > 0 && data[0] == '{' {
		return false // the common case, told without trimming
	}
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

// Tables interns table names. A decoder keeps one, and a record naming a
// table seen before reuses that table's strings instead of allocating two
// per record; several tables are kept, since a source transaction
// interleaves the tables it writes. It is safe for concurrent use; the zero
// Tables is ready.
type Tables struct {
	// p holds the tables seen, copied on write: lookups never lock.
	p atomic.Pointer[[]changelog.Table]
}

// maxTables bounds a Tables; past it, it starts over. A lookup compares
// names one by one, so the bound also bounds its cost.
const maxTables = 64

// Intern returns the table named by ns and name.
func (c *Tables) Intern(ns, name []byte) changelog.Table {
	old := c.p.Load()
	if old != nil {
		for _, t := range *old {
			if string(name) == t.Name && string(ns) == t.Namespace {
				return t
			}
		}
	}
	t := changelog.Table{Namespace: string(ns), Name: string(name)}
	var ts []changelog.Table
	if old != nil && len(*old) < maxTables {
		ts = append(make([]changelog.Table, 0, len(*old)+1), *old...)
	}
	ts = append(ts, t)
	c.p.Store(&ts)
	return t
}

// LastString remembers the latest string it made, so consecutive records
// that repeat one (the transaction id of a transaction's events) share it
// instead of allocating it each. It is safe for concurrent use; the zero
// LastString is ready.
type LastString struct {
	p atomic.Pointer[string]
}

// Get returns b as a string. Given an arena, it leaves the remembering to
// the arena (changelog.Arena.Recent) rather than to c: each decoding
// goroutine has arenas of its own, so one goroutine's batches no longer
// overwrite the string the next record of another's would share, and a
// new string costs one allocation, not two.
func (c *LastString) Get(a *changelog.Arena, b []byte) string {
	if a != nil {
		return a.Recent(b)
	}
	if s := c.p.Load(); s != nil && *s == string(b) {
		return *s
	}
	s := string(b)
	c.p.Store(&s)
	return s
}

// Error is a record a decoder refuses, before it is given the record's
// position and table: what is wrong and what to do about it.
type Error struct {
	Reason, Hint string
	Err          error
}

func (e *Error) Error() string { return e.Reason }

func (e *Error) Unwrap() error { return e.Err }

// Fail turns a decoding failure into the *format.Error decoders return: an
// *Error keeps its reason and hint; a string that is not text (see
// BadText) gets a reason naming its column and offset and HintText;
// anything else is a JSON syntax error, with jsonHint.
func Fail(name string, pos changelog.Position, table string, err error, jsonHint string) *format.Error {
	fe := &format.Error{Pos: pos, Format: name, Table: table}
	var re *Error
	switch {
	case errors.As(err, &re):
		fe.Reason, fe.Hint, fe.Err = re.Reason, re.Hint, re.Err
	default:
		if reason, ok := BadText(err, ""); ok {
			fe.Reason, fe.Hint = reason, HintText
			break
		}
		fe.Reason, fe.Hint, fe.Err = "invalid JSON", jsonHint, err
	}
	return fe
}

// HintText is what to do about a string that is not text.
const HintText = "txsink writes text exactly as the source wrote it and never puts U+FFFD in place of what is not a character; " +
	"fix the producer (a UTF-16 surrogate pair split apart, or text in another encoding), " +
	"or set bad-input: dead-letter to quarantine such records"

// BadText returns the reason to refuse a record for err when err is a
// string the scanner found well formed but not text (a
// *jsonscan.SyntaxError with BadText: an invalid UTF-8 byte or a lone
// surrogate escape), naming the row image field it is in (`"after"`; ""
// for none), its column when known and its byte offset in the record.
func BadText(err error, field string) (reason string, ok bool) {
	var se *jsonscan.SyntaxError
	if !errors.As(err, &se) || !se.BadText {
		return "", false
	}
	var b strings.Builder
	if field != "" {
		b.WriteString(field)
		b.WriteString(" image")
	}
	if se.Column != "" {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("column ")
		b.WriteString(strconv.Quote(se.Column))
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(se.Msg)
	b.WriteString(" at byte ")
	b.WriteString(strconv.Itoa(se.Offset))
	return b.String(), true
}

// InImage is err, or when err is bad text in the row image field (see
// BadText) the *Error that names the image and column.
func InImage(err error, field string) error {
	if reason, ok := BadText(err, field); ok {
		return &Error{Reason: reason, Hint: HintText}
	}
	return err
}

// FindTable names the table of a record that failed to decode, by a
// lenient look at its top-level "database" and "table" fields (Canal's and
// Maxwell's): an error can come before them in the text. It passes over
// values that are not text (jsonscan.Scanner.TolerateBadText), gives up
// at the first syntax error, and returns "" when the record names no
// table.
func FindTable(data []byte) string {
	s := jsonscan.New(data)
	s.TolerateBadText()
	if s.Peek() != '{' || s.BeginObject() != nil {
		return ""
	}
	var t changelog.Table
	for first := true; ; first = false {
		key, ok, err := s.NextKey(first)
		if err != nil || !ok {
			break
		}
		tok, err := s.Value()
		if err != nil {
			break
		}
		if tok.Kind != jsonscan.String {
			continue
		}
		switch {
		case s.Equal(key, "database"):
			t.Namespace = s.Text(tok)
		case s.Equal(key, "table"):
			t.Name = s.Text(tok)
		}
	}
	if t.Name == "" {
		return ""
	}
	return t.String()
}

// NamedTable names the table of a record that failed to decode: t, the
// table the decoder read, or when it read none the one FindTable finds.
func NamedTable(t changelog.Table, data []byte) string {
	if t.Name == "" {
		return FindTable(data)
	}
	return t.String()
}

// ReadName reads a name field: a string, or null (nil).
func ReadName(s *jsonscan.Scanner, field, hint string) ([]byte, error) {
	// Most names are plain strings, read in place.
	if j, b := ScanString(s.Data(), s.Pos(), false); j >= 0 {
		s.Skip(j - s.Pos())
		return b, nil
	}
	tok, err := s.Value()
	if err != nil {
		return nil, err
	}
	switch tok.Kind {
	case jsonscan.String:
		return s.Bytes(tok), nil
	case jsonscan.Null:
		return nil, nil
	}
	return nil, &Error{Reason: strconv.Quote(field) + " must be a string, not a " + tok.Kind.String(), Hint: hint}
}

// ReadEnum reads a field whose value is one of a few strings (an op, a
// type): a string, or null ("") when null is set. A value among known is
// returned as that string, so reading one does not allocate; another is
// decoded.
func ReadEnum(s *jsonscan.Scanner, field, hint string, null bool, known []string) (string, error) {
	// Most are plain strings, read in place: their value is their text.
	if j, b := ScanString(s.Data(), s.Pos(), false); j >= 0 {
		s.Skip(j - s.Pos())
		for _, k := range known {
			// The first byte first: most known values are a byte or
			// two long, and differ there.
			if len(b) == len(k) && (len(k) == 0 || b[0] == k[0]) && string(b) == k {
				return k, nil
			}
		}
		return string(b), nil
	}
	tok, err := s.Value()
	if err != nil {
		return "", err
	}
	switch {
	case tok.Kind == jsonscan.String:
		b := s.Bytes(tok)
		for _, k := range known {
			if string(b) == k {
				return k, nil
			}
		}
		return s.Text(tok), nil
	case tok.Kind == jsonscan.Null && null:
		return "", nil
	}
	return "", &Error{Reason: strconv.Quote(field) + " must be a string, not a " + tok.Kind.String(), Hint: hint}
}

// ReadImage reads a row image: an object with at least one column, or null
// (ok false).
func ReadImage(s *jsonscan.Scanner, field, hint string) (row changelog.Row, ok bool, err error) {
	var rs jsonscan.Rows
	var p jsonscan.Pending
	if ok, err = ScanImage(s, &rs, &p, field, hint); !ok {
		return changelog.Row{}, false, err
	}
	return rs.RowIn(s.Arena(), s.Data(), &p), true, nil
}

// ScanImage is ReadImage for a decoder that builds the rows of a record
// together once it has read the record (see jsonscan.Rows): it reads and
// checks the image, with ReadImage's errors, into *p, to be built.
func ScanImage(s *jsonscan.Scanner, rs *jsonscan.Rows, p *jsonscan.Pending, field, hint string) (ok bool, err error) {
	ok, err = scanObject(s, rs, p, nil, field, " image", hint)
	if ok && p.Len() == 0 {
		return false, &Error{Reason: strconv.Quote(field) + " image has no columns", Hint: hint}
	}
	return ok, err
}

// ScanImageOf is ScanImage for an image of which only the columns keys
// names are wanted (see jsonscan.Scanner.ScanRowOf): *p holds those
// alone, and may hold none, which the caller judges.
func ScanImageOf(s *jsonscan.Scanner, rs *jsonscan.Rows, p *jsonscan.Pending, keys *jsonscan.Keys, field, hint string) (ok bool, err error) {
	return scanObject(s, rs, p, keys, field, " image", hint)
}

// ReadObject reads an object as a row, or null (ok false). Unlike
// ReadImage it takes an empty object: formats whose records carry an
// object field before saying whether they are row events (Maxwell's "old"
// on a DDL record) judge emptiness once they know.
func ReadObject(s *jsonscan.Scanner, field, hint string) (row changelog.Row, ok bool, err error) {
	var rs jsonscan.Rows
	var p jsonscan.Pending
	if ok, err = scanObject(s, &rs, &p, nil, field, "", hint); !ok {
		return changelog.Row{}, false, err
	}
	return rs.RowIn(s.Arena(), s.Data(), &p), true, nil
}

// scanObject scans an object as a row into rs and *p (of the columns keys
// names only, when not nil), or null (ok false); what names the field in a
// refusal is its quoted name followed by what.
func scanObject(s *jsonscan.Scanner, rs *jsonscan.Rows, p *jsonscan.Pending, keys *jsonscan.Keys, field, what, hint string) (ok bool, err error) {
	switch s.Peek() {
	case '{':
		if keys != nil {
			err = s.ScanRowOf(rs, p, keys)
		} else {
			err = s.ScanRow(rs, p)
		}
		if err != nil {
			if errors.Is(err, jsonscan.ErrDuplicateColumn) {
				return false, &Error{Reason: strconv.Quote(field) + what + ": " + err.Error(), Hint: hint}
			}
			return false, InImage(err, strconv.Quote(field))
		}
		return true, nil
	case 'n':
		// An insert's "before", a delete's "after": null, read in place
		// when it is (its four bytes compared at once), else checked as
		// a literal by the scanner.
		if d, i := s.Data(), s.Pos(); len(d)-i >= 4 && string(d[i:i+4]) == "null" {
			s.Skip(4)
			return false, nil
		}
		_, err = s.Value()
		return false, err
	}
	tok, err := s.Value()
	if err != nil {
		return false, err
	}
	return false, &Error{Reason: strconv.Quote(field) + " must be an object or null, not a " + tok.Kind.String(), Hint: hint}
}
