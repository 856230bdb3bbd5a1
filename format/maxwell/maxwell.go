// Package maxwell decodes Maxwell's daemon change records in JSON, the
// format called "maxwell-json".
//
// A record is one row event:
//
//	{"database":"test","table":"product","type":"update","ts":1596684906,
//	 "xid":7216,"xoffset":0,"commit":true,
//	 "data":{"id":105,"name":"hammer","address":"Beijing"},
//	 "old":{"address":"Shanghai"},
//	 "primary_key_columns":["id"]}
//
// What a record becomes:
//
//	type "insert", "bootstrap-insert"  one +I change, After = data
//	type "update"                      one +U change, After = data, Before = data overlaid with old
//	type "delete"                      one -D change, Before = data (the deleted row)
//	type "database-create", "database-alter", "database-drop",
//	     "table-create", "table-alter", "table-drop" (DDL, with output_ddl)
//	                                   one row-less changelog.SchemaChange change naming the
//	                                   table (or only the database): skipped and counted by
//	                                   the engine, never data
//	type "bootstrap-start", "bootstrap-complete"
//	                                   no change and no error (counted, see Decoder.Skipped)
//	tombstone                          (empty, white space or null) no change and no error
//
// Quirks handled:
//
//   - "old" holds only the previous values of the columns the update
//     changed (an explicit null means the column was NULL). The before image
//     is "data" with those values put back; a column of "old" that "data"
//     lacks is added to the before image, so Before can have more columns
//     than After. When the update changed a key column, Before holds the old
//     key and the engine deletes it.
//   - Transactions: the rows of one transaction share "xid"; every row but
//     the last carries "xoffset", and the last one carries "commit": true.
//     Change.TxnID is the xid's text and Change.TxnEnd is set on the row
//     with "commit": true.
//   - "ts" is in seconds (not milliseconds); txsink does not use it, nor
//     "xoffset", "primary_key_columns", "position", "server_id" and the other
//     fields Maxwell may add.
//   - The table is "database" and "table".
//
// Values keep their exact JSON text: numbers become changelog.Number,
// strings stay strings, nested objects and arrays (JSON columns) become
// changelog.JSON; the target column's type decides later what they mean.
//
// Every error is a *format.Error naming the record's position, its table
// when known, and a hint.
package maxwell

import (
	"strconv"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/internal/envelope"
	"github.com/txsink/txsink/format/internal/jsonrecord"
	"github.com/txsink/txsink/format/internal/jsonscan"
)

// Name is the format's name in the pipeline config.
const Name = "maxwell-json"

// Decoder decodes maxwell-json records. It is safe for concurrent use.
type Decoder struct {
	// env interns tables, column names and the transaction id a
	// transaction's records repeat.
	env envelope.Reader
}

var _ format.Decoder = (*Decoder)(nil)

// New returns a Decoder. The format takes no options: any option is an
// error.
func New(opts format.Options) (*Decoder, error) {
	if err := opts.Check(Name); err != nil {
		return nil, err
	}
	return &Decoder{env: envelope.Reader{Format: Name, HintJSON: hintJSON, CountSkips: true}}, nil
}

// Skipped returns how many records the decoder has decoded to no change
// because they carry no row event: bootstrap markers and DDL records.
// Tombstones are not counted.
func (d *Decoder) Skipped() int64 { return d.env.Skipped() }

// The fields of a record maxwell reads, by their index in fields.
const (
	fDatabase = iota
	fTable
	fType
	fXid
	fCommit
	fData
	fOld
)

var fields = envelope.NewFields("database", "table", "type", "xid", "commit", "data", "old")

// rowTypes are the values of "type" that are row events.
var rowTypes = []string{"insert", "update", "delete"}

// record is what a record's fields said, gathered in one pass.
type record struct {
	database, table []byte
	tbl             changelog.Table
	typ             string
	data, old       changelog.Row
	hasData, hasOld bool
	xid             []byte // a view of the record's text until decode interns it
	commit          bool
}

// recordError is a refused record before it gets its position and table.
type recordError = jsonrecord.Error

// Hints shared by several errors.
const (
	hintJSON = "each record must be one Maxwell row event in JSON (one per line in a file); " +
		"check that the producer is Maxwell's daemon with its JSON output"
	hintMalformed = "the record is not a well-formed Maxwell row event; check the producer of this topic or file"
	hintTable     = `Maxwell names the table in the "database" and "table" fields; check for a producer that drops them`
)

// Decode decodes one record. See the package documentation for what a
// record becomes.
func (d *Decoder) Decode(data []byte, pos changelog.Position) ([]changelog.Change, error) {
	return d.DecodeIn(nil, data, pos)
}

// DecodeIn is Decode with the changes and their rows in a
// (format.ArenaDecoder).
func (d *Decoder) DecodeIn(a *changelog.Arena, data []byte, pos changelog.Position) ([]changelog.Change, error) {
	var r record
	return d.env.Decode(data, pos,
		func() ([]changelog.Change, error) { return d.decode(a, data, &r) },
		func(error) string { return jsonrecord.NamedTable(r.tbl, data) })
}

// decode returns the record's change, none when it is a record without a
// row (skipped).
func (d *Decoder) decode(a *changelog.Arena, data []byte, r *record) ([]changelog.Change, error) {
	s := d.env.Scanner(a, data)
	seen, err := d.env.ReadRecord(&s, fields, hintMalformed, func(f int) (err error) {
		switch f {
		case fDatabase:
			r.database, err = jsonrecord.ReadName(&s, "database", hintMalformed)
		case fTable:
			r.table, err = jsonrecord.ReadName(&s, "table", hintMalformed)
		case fType:
			r.typ, err = jsonrecord.ReadEnum(&s, "type", hintMalformed, false, rowTypes)
		case fXid:
			err = readXid(&s, r)
		case fCommit:
			err = readCommit(&s, r)
		case fData:
			r.data, r.hasData, err = jsonrecord.ReadObject(&s, "data", hintMalformed)
		case fOld:
			r.old, r.hasOld, err = jsonrecord.ReadObject(&s, "old", hintMalformed)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(r.table) > 0 {
		r.tbl = d.env.Table(r.database, r.table)
	}

	if !seen.Has(fType) {
		return nil, &recordError{
			Reason: `record has no "type" field: it is not a Maxwell row event`,
			Hint:   hintJSON,
		}
	}
	var kind changelog.Kind
	switch r.typ {
	case "insert", "bootstrap-insert":
		kind = changelog.Insert
	case "update":
		kind = changelog.UpdateAfter
	case "delete":
		kind = changelog.Delete
	case "bootstrap-start", "bootstrap-complete":
		return nil, nil
	case "database-create", "database-alter", "database-drop",
		"table-create", "table-alter", "table-drop":
		// DDL (output_ddl): the table, or the database alone.
		t := r.tbl
		if t.Name == "" {
			t = d.env.Table(r.database, nil)
		}
		cs := a.Changes(1)
		cs[0] = changelog.Change{Kind: changelog.SchemaChange, Table: t}
		return cs, nil
	default:
		return nil, &recordError{
			Reason: "unknown type " + strconv.Quote(r.typ),
			Hint: `Maxwell row types are "insert", "update", "delete" and "bootstrap-insert"; ` +
				"check that the records come from Maxwell's daemon",
		}
	}
	if r.tbl.Name == "" {
		return nil, &recordError{Reason: `record has no "table"`, Hint: hintTable}
	}
	if !r.hasData {
		return nil, &recordError{
			Reason: r.typ + ` record has no "data"`,
			Hint:   `Maxwell writes the row in "data" for every row event; the record is incomplete, check its producer`,
		}
	}
	if r.data.IsZero() {
		return nil, &recordError{Reason: `"data" has no columns`, Hint: hintMalformed}
	}

	cs := a.Changes(1)
	c := &cs[0]
	c.Kind, c.Table, c.TxnEnd = kind, r.tbl, r.commit
	if len(r.xid) > 0 {
		c.TxnID = d.env.String(a, r.xid)
	}
	switch kind {
	case changelog.Insert:
		c.After = r.data
	case changelog.UpdateAfter:
		c.After = r.data
		c.Before = jsonrecord.Overlay(r.data, r.old)
	case changelog.Delete:
		c.Before = r.data
	}
	return cs, nil
}

// readXid reads "xid", a number (or a string), kept as its text.
func readXid(s *jsonscan.Scanner, r *record) error {
	tok, err := s.Value()
	if err != nil {
		return err
	}
	switch tok.Kind {
	case jsonscan.Number, jsonscan.String:
		r.xid = s.Bytes(tok)
		return nil
	case jsonscan.Null:
		return nil
	}
	return &recordError{Reason: `"xid" must be a number, not a ` + tok.Kind.String(), Hint: hintMalformed}
}

func readCommit(s *jsonscan.Scanner, r *record) error {
	tok, err := s.Value()
	if err != nil {
		return err
	}
	switch tok.Kind {
	case jsonscan.True:
		r.commit = true
		return nil
	case jsonscan.False, jsonscan.Null:
		return nil
	}
	return &recordError{Reason: `"commit" must be a boolean, not a ` + tok.Kind.String(), Hint: hintMalformed}
}
