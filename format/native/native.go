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
//	op       required. "+I" insert, "+U" update (new image), "-U" update-before, "-D" delete,
//	         "TRUNCATE" every row of the table is gone (changelog.Truncate).
//	table    required. "namespace.name", split at the first '.', or just "name".
//	row      required, a non-empty object, but for TRUNCATE, which has none. The After
//	         image for +I and +U; the Before image (at least the key columns) for -D and -U.
//	before   optional, +U only: the old image, or at least its key columns. When its
//	         key differs from row's, the update moved the row to a new key.
//	txn      optional: the source transaction the change belongs to (Change.TxnID).
//	txn_end  optional: true on the last change of the transaction (Change.TxnEnd).
//	types    optional: the table's columns and their types (Change.Types), for
//	         schema.create and schema.evolve, e.g.
//	         {"dialect":"postgres","columns":{"id":"bigint","note":"text"},"key":["id"],"not_null":["id"]}:
//	         columns in the table's order with their types in the dialect's own
//	         spelling ("postgres": as format_type writes them; "mysql": as
//	         COLUMN_TYPE does), the primary key, and the columns that take no NULL
//	         (the key's never do). The postgres source writes it on every line.
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
	"github.com/txsink/txsink/format/internal/envelope"
	"github.com/txsink/txsink/format/internal/jsonrecord"
	"github.com/txsink/txsink/format/internal/jsonscan"
)

// Name is the format's name in the pipeline config.
const Name = "txsink-json"

// Decoder decodes txsink-json lines. Its only state is what it interns
// (column names, tables, transaction ids); it is safe for concurrent use.
type Decoder struct {
	// env interns the column names of row images, the tables lines name
	// and the transaction id a transaction's lines repeat.
	env envelope.Reader
	// types holds the tables "types" members declare, by their text.
	types typeCache
}

var _ format.Decoder = (*Decoder)(nil)

// New returns a Decoder. txsink-json takes no options, so any option is an
// error.
func New(opts format.Options) (*Decoder, error) {
	if err := opts.Check(Name); err != nil {
		return nil, err
	}
	// No tombstones: a blank line is no change, but null is refused.
	return &Decoder{env: envelope.Reader{Format: Name, HintJSON: hintJSON, NoTombstones: true}}, nil
}

const (
	hintJSON = "each line must be one JSON object such as " +
		`{"op":"+I","table":"db.orders","row":{"id":1}}` + "; see the txsink-json format documentation"
	hintFields = "txsink-json records have the fields op, table, row, before, txn, txn_end and types"
)

// The fields of a line, by their index in fields.
const (
	fOp = iota
	fTable
	fRow
	fBefore
	fTxn
	fTxnEnd
	fTypes
)

var fields = envelope.NewFields("op", "table", "row", "before", "txn", "txn_end", "types").Strict()

type recordError = jsonrecord.Error

// record is what a line's fields said, gathered in one pass.
type record struct {
	c         changelog.Change
	row, bef  changelog.Row
	hasBefore bool
	// badText is set when a row image holds a value that is not text
	// (jsonrecord.BadText), which can come before "table".
	badText bool
}

// Decode decodes one line. A blank line gives no change.
func (d *Decoder) Decode(data []byte, pos changelog.Position) ([]changelog.Change, error) {
	return d.DecodeIn(nil, data, pos)
}

// DecodeIn is Decode with the changes and their rows in a
// (format.ArenaDecoder).
func (d *Decoder) DecodeIn(a *changelog.Arena, data []byte, pos changelog.Position) ([]changelog.Change, error) {
	var r record
	return d.env.Decode(data, pos,
		func() ([]changelog.Change, error) { return d.decode(a, data, &r) },
		func(error) string {
			if r.badText && r.c.Table.Name == "" {
				// A value that is not text came before "table": a
				// lenient look finds the table the refusal names.
				return jsonrecord.FindTable(data)
			}
			return r.c.Table.String()
		})
}

func (d *Decoder) decode(a *changelog.Arena, data []byte, r *record) ([]changelog.Change, error) {
	s := d.env.Scanner(a, data)
	if s.Peek() == 0 {
		return nil, nil // a blank line
	}
	c := &r.c
	seen, err := d.env.ReadRecord(&s, fields, hintFields, func(f int) (err error) {
		switch f {
		case fOp:
			err = readOp(&s, c)
		case fTable:
			err = readTable(&s, c, &d.env)
		case fRow:
			r.row, err = readRow(&s, r, "row", false)
		case fBefore:
			r.bef, err = readRow(&s, r, "before", true)
			r.hasBefore = !r.bef.IsZero()
		case fTxn:
			err = readTxn(&s, c, a, &d.env)
		case fTxnEnd:
			err = readTxnEnd(&s, c)
		case fTypes:
			c.Types, err = readTypes(&s, &d.types)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, f := range [...]int{fOp, fTable, fRow} {
		if !seen.Has(f) && (f != fRow || c.Kind != changelog.Truncate) {
			return nil, &recordError{Reason: "record has no " + strconv.Quote(fields.Names()[f]) + " field", Hint: hintFields}
		}
	}
	if c.Kind == changelog.Truncate && seen.Has(fRow) {
		return nil, &recordError{Reason: `a "TRUNCATE" record has a "row"`, Hint: `a TRUNCATE names its table only: {"op":"TRUNCATE","table":"db.orders"}`}
	}
	if c.Kind.Upserts() {
		c.After = r.row
	} else {
		c.Before = r.row
	}
	if r.hasBefore {
		if c.Kind != changelog.UpdateAfter {
			return nil, &recordError{
				Reason: `"before" is only allowed with op "+U", not ` + strconv.Quote(c.Kind.String()),
				Hint:   `put the image of a -D or -U change in "row"`,
			}
		}
		c.Before = r.bef
	}
	cs := a.Changes(1)
	cs[0] = *c
	return cs, nil
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
		case s.Equal(tok, "TRUNCATE"):
			c.Kind = changelog.Truncate
			return nil
		}
	}
	got := s.Text(tok)
	if tok.Kind == jsonscan.String {
		got = strconv.Quote(got)
	}
	return &recordError{Reason: `"op" must be "+I", "+U", "-U", "-D" or "TRUNCATE", not ` + got, Hint: hintFields}
}

func readTable(s *jsonscan.Scanner, c *changelog.Change, env *envelope.Reader) error {
	tok, err := s.Value()
	if err != nil {
		return err
	}
	if tok.Kind != jsonscan.String {
		return &recordError{Reason: `"table" must be a string, not a ` + tok.Kind.String(), Hint: hintFields}
	}
	// Split as ParseTable does, on the record's bytes, so that a table seen
	// before costs no allocation.
	text := s.Bytes(tok)
	ns, name, dotted := bytes.Cut(text, []byte("."))
	if !dotted {
		ns, name = nil, text
	}
	if len(name) == 0 || (dotted && len(ns) == 0) {
		return &recordError{Reason: (&tableError{string(text)}).Error(), Hint: `write the table as "namespace.name" or "name"`}
	}
	c.Table = env.Table(ns, name)
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
func readRow(s *jsonscan.Scanner, r *record, field string, nullable bool) (changelog.Row, error) {
	switch s.Peek() {
	case '{':
		row, err := s.Row()
		if err != nil {
			if reason, ok := jsonrecord.BadText(err, strconv.Quote(field)); ok {
				r.badText = true
				return row, &recordError{Reason: reason, Hint: jsonrecord.HintText}
			}
			if _, ok := err.(*jsonscan.SyntaxError); ok {
				return row, err
			}
			return row, &recordError{Reason: strconv.Quote(field) + ": " + err.Error(), Hint: "name each column once"}
		}
		if row.IsZero() {
			return row, &recordError{Reason: strconv.Quote(field) + " has no columns", Hint: "a row image needs at least the key columns"}
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
	return changelog.Row{}, &recordError{Reason: strconv.Quote(field) + " must be an object, not a " + tok.Kind.String(), Hint: hintFields}
}

func readTxn(s *jsonscan.Scanner, c *changelog.Change, a *changelog.Arena, env *envelope.Reader) error {
	tok, err := s.Value()
	if err != nil {
		return err
	}
	switch tok.Kind {
	case jsonscan.String:
		if b := s.Bytes(tok); len(b) > 0 {
			c.TxnID = env.String(a, b)
		}
		return nil
	case jsonscan.Null:
		return nil
	}
	return &recordError{Reason: `"txn" must be a string, not a ` + tok.Kind.String(), Hint: hintFields}
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
	return &recordError{Reason: `"txn_end" must be true or false, not a ` + tok.Kind.String(), Hint: hintFields}
}
