// Package native reads and writes "txsink-json", txsink's own changelog
// format: one JSON object per line, one change per object.
//
//	{"op":"+I","table":"inventory.orders","row":{"id":1,"amount":"9.99","note":null}}
//	{"op":"+U","table":"inventory.orders","row":{"id":1,"amount":"12.50","note":"gift"},"before":{"id":1},"txn":"tx-42"}
//	{"op":"-D","table":"inventory.orders","row":{"id":1},"txn":"tx-42","txn_end":true}
//	{"op":"+I","table":"events","row":{"id":7,"payload":{"tags":["a","b"]}}}
//
// Fields:
//
//	op       required. "+I" insert, "+U" update (new image), "-U" update-before, "-D" delete.
//	table    required. "namespace.name", split at the first '.', or just "name".
//	row      required, a non-empty object. The After image for +I and +U; the Before
//	         image (at least the key columns) for -D and -U.
//	before   optional, +U only: the old image, or at least its key columns. When its
//	         key differs from row's, the update moved the row to a new key.
//	txn      optional: the source transaction the change belongs to (Change.TxnID).
//	txn_end  optional: true on the last change of the transaction (Change.TxnEnd).
//
// Optional fields may be null. Any other field is an error, so a typo
// ("rows", "tabel") fails loudly instead of being ignored. A blank line is
// no change.
//
// Values follow the changelog.Value rules: numbers keep their exact text
// (changelog.Number), so "amount": 12.50 and "amount": "12.50" both reach a
// DECIMAL column exactly; strings are strings; true/false are bool; null is
// SQL NULL; objects and arrays are changelog.JSON. The target column's type
// decides what a value means: a date is written as the text "2024-05-01", a
// timestamp as "2024-05-01 10:00:00.123456".
//
// Append writes a change in this format; Decode(Append(c)) gives c back
// (numbers given as int64 or float64 come back as changelog.Number).
package native

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/internal/jsonrecord"
	"github.com/txsink/txsink/format/internal/jsonscan"
)

// Name is the format's name in the pipeline config.
const Name = "txsink-json"

// Decoder decodes txsink-json lines. Its only state is what it interns
// (column names, tables, transaction ids); it is safe for concurrent use.
type Decoder struct {
	// names interns the column names of row images (see jsonscan.Names),
	// tables the tables lines name, and txns the transaction id a
	// transaction's lines repeat.
	names  jsonscan.Names
	tables jsonrecord.Tables
	txns   jsonrecord.LastString
}

var _ format.Decoder = (*Decoder)(nil)

// New returns a Decoder. txsink-json takes no options, so any option is an
// error.
func New(opts format.Options) (*Decoder, error) {
	if err := opts.Check(Name); err != nil {
		return nil, err
	}
	return &Decoder{}, nil
}

const (
	hintJSON = "each line must be one JSON object such as " +
		`{"op":"+I","table":"db.orders","row":{"id":1}}` + "; see the txsink-json format documentation"
	hintFields = "txsink-json records have the fields op, table, row, before, txn and txn_end"
)

// Bits of the fields read so far, to reject duplicates.
const (
	fOp = 1 << iota
	fTable
	fRow
	fBefore
	fTxn
	fTxnEnd
)

type recordError struct {
	reason, hint string
	table        string
	badText      bool // a value that is not text (jsonrecord.BadText)
}

func (e *recordError) Error() string { return e.reason }

// Decode decodes one line. A blank line gives no change.
func (d *Decoder) Decode(data []byte, pos changelog.Position) ([]changelog.Change, error) {
	return d.DecodeIn(nil, data, pos)
}

// DecodeIn is Decode with the changes and their rows in a
// (format.ArenaDecoder).
func (d *Decoder) DecodeIn(a *changelog.Arena, data []byte, pos changelog.Position) ([]changelog.Change, error) {
	var c changelog.Change
	empty, err := d.decode(a, data, &c)
	if err != nil {
		table := c.Table.String()
		if re, ok := err.(*recordError); ok && re.badText && c.Table.Name == "" {
			// A value that is not text came before "table": a
			// lenient look finds the table the refusal names.
			table = jsonrecord.FindTable(data)
		}
		if re, ok := err.(*recordError); ok {
			return nil, &format.Error{Pos: pos, Format: Name, Table: table, Reason: re.reason, Hint: re.hint}
		}
		return nil, jsonrecord.Fail(Name, pos, table, err, hintJSON)
	}
	if empty {
		return nil, nil
	}
	c.Pos = pos
	c.Size = len(data)
	cs := a.Changes(1)
	cs[0] = c
	return cs, nil
}

func (d *Decoder) decode(a *changelog.Arena, data []byte, c *changelog.Change) (empty bool, err error) {
	s := jsonscan.New(data)
	s.UseNames(&d.names)
	s.UseArena(a)
	switch s.Peek() {
	case 0:
		return true, nil
	case '{':
	default:
		tok, err := s.Value()
		if err != nil {
			return false, err
		}
		return false, &recordError{reason: "record is a JSON " + tok.Kind.String() + ", not an object", hint: hintJSON}
	}
	if err := s.BeginObject(); err != nil {
		return false, err
	}
	var (
		seen      uint8
		row, bef  changelog.Row
		hasBefore bool
	)
	for first := true; ; first = false {
		key, ok, err := s.NextKey(first)
		if err != nil {
			return false, err
		}
		if !ok {
			break
		}
		var bit uint8
		switch {
		case s.Equal(key, "op"):
			bit = fOp
			err = readOp(&s, c)
		case s.Equal(key, "table"):
			bit = fTable
			err = readTable(&s, c, &d.tables)
		case s.Equal(key, "row"):
			bit = fRow
			row, err = readRow(&s, "row", false)
		case s.Equal(key, "before"):
			bit = fBefore
			bef, err = readRow(&s, "before", true)
			hasBefore = !bef.IsZero()
		case s.Equal(key, "txn"):
			bit = fTxn
			err = readTxn(&s, c, a, &d.txns)
		case s.Equal(key, "txn_end"):
			bit = fTxnEnd
			err = readTxnEnd(&s, c)
		default:
			return false, &recordError{reason: "unknown field " + strconv.Quote(s.Text(key)), hint: hintFields}
		}
		if err != nil {
			return false, err
		}
		if seen&bit != 0 {
			return false, &recordError{reason: "field " + strconv.Quote(s.Text(key)) + " appears twice", hint: hintFields}
		}
		seen |= bit
	}
	if err := s.End(); err != nil {
		return false, err
	}
	for _, f := range [...]struct {
		bit  uint8
		name string
	}{{fOp, "op"}, {fTable, "table"}, {fRow, "row"}} {
		if seen&f.bit == 0 {
			return false, &recordError{reason: "record has no " + strconv.Quote(f.name) + " field", hint: hintFields}
		}
	}
	if c.Kind.Upserts() {
		c.After = row
	} else {
		c.Before = row
	}
	if hasBefore {
		if c.Kind != changelog.UpdateAfter {
			return false, &recordError{
				reason: `"before" is only allowed with op "+U", not ` + strconv.Quote(c.Kind.String()),
				hint:   `put the image of a -D or -U change in "row"`,
			}
		}
		c.Before = bef
	}
	return false, nil
}

func readOp(s *jsonscan.Scanner, c *changelog.Change) error {
	tok, err := s.Value()
	if err != nil {
		return err
	}
	if tok.Kind == jsonscan.String {
		switch {
		case s.Equal(tok, "+I"):
			c.Kind = changelog.Insert
			return nil
		case s.Equal(tok, "+U"):
			c.Kind = changelog.UpdateAfter
			return nil
		case s.Equal(tok, "-U"):
			c.Kind = changelog.UpdateBefore
			return nil
		case s.Equal(tok, "-D"):
			c.Kind = changelog.Delete
			return nil
		}
	}
	got := s.Text(tok)
	if tok.Kind == jsonscan.String {
		got = strconv.Quote(got)
	}
	return &recordError{reason: `"op" must be "+I", "+U", "-U" or "-D", not ` + got, hint: hintFields}
}

func readTable(s *jsonscan.Scanner, c *changelog.Change, tables *jsonrecord.Tables) error {
	tok, err := s.Value()
	if err != nil {
		return err
	}
	if tok.Kind != jsonscan.String {
		return &recordError{reason: `"table" must be a string, not a ` + tok.Kind.String(), hint: hintFields}
	}
	// Split as ParseTable does, on the record's bytes, so that a table seen
	// before costs no allocation.
	text := s.Bytes(tok)
	ns, name, dotted := bytes.Cut(text, []byte("."))
	if !dotted {
		ns, name = nil, text
	}
	if len(name) == 0 || (dotted && len(ns) == 0) {
		return &recordError{reason: (&tableError{string(text)}).Error(), hint: `write the table as "namespace.name" or "name"`}
	}
	c.Table = tables.Intern(ns, name)
	return nil
}

// ParseTable reads a table name as txsink-json writes it: "namespace.name",
// split at the first '.', or "name". Neither part may be empty.
func ParseTable(s string) (changelog.Table, error) {
	ns, name, dotted := strings.Cut(s, ".")
	if !dotted {
		ns, name = "", s
	}
	if name == "" || (dotted && ns == "") {
		return changelog.Table{}, &tableError{s}
	}
	return changelog.Table{Namespace: ns, Name: name}, nil
}

type tableError struct{ s string }

func (e *tableError) Error() string {
	return `"table" ` + strconv.Quote(e.s) + ` has an empty namespace or name`
}

// readRow reads a row image; null is allowed for the optional before.
func readRow(s *jsonscan.Scanner, field string, nullable bool) (changelog.Row, error) {
	switch s.Peek() {
	case '{':
		row, err := s.Row()
		if err != nil {
			if reason, ok := jsonrecord.BadText(err, strconv.Quote(field)); ok {
				return row, &recordError{reason: reason, hint: jsonrecord.HintText, badText: true}
			}
			if _, ok := err.(*jsonscan.SyntaxError); ok {
				return row, err
			}
			return row, &recordError{reason: strconv.Quote(field) + ": " + err.Error(), hint: "name each column once"}
		}
		if row.IsZero() {
			return row, &recordError{reason: strconv.Quote(field) + " has no columns", hint: "a row image needs at least the key columns"}
		}
		return row, nil
	case 'n':
		if nullable {
			_, err := s.Value()
			return changelog.Row{}, err
		}
	}
	tok, err := s.Value()
	if err != nil {
		return changelog.Row{}, err
	}
	return changelog.Row{}, &recordError{reason: strconv.Quote(field) + " must be an object, not a " + tok.Kind.String(), hint: hintFields}
}

func readTxn(s *jsonscan.Scanner, c *changelog.Change, a *changelog.Arena, txns *jsonrecord.LastString) error {
	tok, err := s.Value()
	if err != nil {
		return err
	}
	switch tok.Kind {
	case jsonscan.String:
		if b := s.Bytes(tok); len(b) > 0 {
			c.TxnID = txns.Get(a, b)
		}
		return nil
	case jsonscan.Null:
		return nil
	}
	return &recordError{reason: `"txn" must be a string, not a ` + tok.Kind.String(), hint: hintFields}
}

func readTxnEnd(s *jsonscan.Scanner, c *changelog.Change) error {
	tok, err := s.Value()
	if err != nil {
		return err
	}
	switch tok.Kind {
	case jsonscan.True:
		c.TxnEnd = true
		return nil
	case jsonscan.False, jsonscan.Null:
		return nil
	}
	return &recordError{reason: `"txn_end" must be true or false, not a ` + tok.Kind.String(), hint: hintFields}
}
