// Package canal decodes Canal's flat messages in JSON (what Canal writes
// to Kafka, RocketMQ and the other message queues in MQ mode with
// flatMessage=true), the format called "canal-json".
//
// A record is one flat message, which can hold several rows of one table:
//
//	{"data":[{"id":"101","name":"scooter","weight":"5.17"},
//	         {"id":"102","name":"car battery","weight":"5.17"}],
//	 "old":[{"weight":"3.14"},{"weight":"8.1"}],
//	 "database":"inventory","table":"products","type":"UPDATE","isDdl":false,
//	 "pkNames":["id"],"mysqlType":{...},"sqlType":{...},"es":1589373560000,"ts":1589373560798,"id":9,"sql":""}
//
// What a record becomes:
//
//	type "INSERT"   one +I change per element of "data", After = data[i]
//	type "UPDATE"   one +U change per element of "data", After = data[i],
//	                Before = data[i] overlaid with old[i]
//	type "DELETE"   one -D change per element of "data", Before = data[i]
//	type "TRUNCATE" an error: txsink does not apply TRUNCATE
//	DDL: types CREATE, ALTER, ERASE, RENAME, CINDEX, DINDEX, and any other
//	type with "isDdl": true
//	                one row-less changelog.SchemaChange change naming the
//	                table (or only the database): skipped and counted by the
//	                engine, never data
//	the other Canal types (QUERY, INIT, GTID, XACOMMIT, XAROLLBACK,
//	MHEARTBEAT)     no change and no error (counted, see Decoder.Skipped)
//	INSERT, UPDATE or DELETE with "isDdl": true
//	                an error: the message contradicts itself
//	"data": []      no change and no error (counted too)
//	tombstone       (empty, white space or null) no change and no error
//
// Quirks handled:
//
//   - One message, many rows: the changes come out in the order of "data".
//   - Canal writes every value as a JSON string ("id":"101", "weight":"3.14");
//     the decoder keeps them as strings and the target column's type
//     converts them when the row is written. JSON null stays nil. (Values
//     are converted by the target's types, never by "mysqlType".)
//   - "old" is aligned with "data" by index and holds only the previous values
//     of the columns the update changed; an explicit null means the column was
//     NULL. The before image is data[i] with those values put back (a column of
//     old[i] that data[i] lacks is added), so when an update changes a key
//     column Before holds the old key and the engine deletes it.
//   - DDL messages ("isDdl": true, "data": null, the statement in "sql"),
//     messages of a type txsink does not know that say "isDdl": true
//     included, become a SchemaChange change, which the engine skips and
//     counts; messages of the other types that carry no rows (INIT, GTID,
//     ...) are no change, counted by Skipped. A message of an unknown type
//     without "isDdl": true is an error, since it may hold rows.
//   - The table is "database" and "table". "es", "ts", "id" (a batch id,
//     not unique) and "gtid" are not used.
//   - "mysqlType" (each column's MySQL type, "decimal(10,2)") and "pkNames"
//     become the changes' Types (see coltype.ParseMySQL), parsed once per
//     distinct pair and shared: the table txsink creates with schema:
//     {create: missing}. Canal does not say which columns take NULL, so
//     every column but the key's does.
//
// Every error is a *format.Error naming the record's position, its table
// when known, and a hint.
package canal

import (
	"errors"
	"strconv"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/internal/envelope"
	"github.com/txsink/txsink/format/internal/jsonrecord"
	"github.com/txsink/txsink/format/internal/jsonscan"
)

// Name is the format's name in the pipeline config.
const Name = "canal-json"

// Decoder decodes canal-json records. It is safe for concurrent use.
type Decoder struct {
	env   envelope.Reader
	types typeCache
}

var _ format.TypeDeclarer = (*Decoder)(nil)

// New returns a Decoder. The format takes no options: any option is an
// error.
func New(opts format.Options) (*Decoder, error) {
	if err := opts.Check(Name); err != nil {
		return nil, err
	}
	return &Decoder{env: envelope.Reader{Format: Name, HintJSON: hintJSON, CountSkips: true}}, nil
}

// Skipped returns how many records the decoder has decoded to no change
// because they carry no row event: DDL messages and the other non-row
// types. Tombstones are not counted.
func (d *Decoder) Skipped() int64 { return d.env.Skipped() }

// The fields of a message canal reads, by their index in fields.
const (
	fDatabase = iota
	fTable
	fType
	fIsDdl
	fData
	fOld
	fMysqlType
	fPkNames
)

var fields = envelope.NewFields("database", "table", "type", "isDdl", "data", "old", "mysqlType", "pkNames")

// rowTypes are the values of "type" that are row events.
var rowTypes = []string{"INSERT", "UPDATE", "DELETE"}

// message is what a record's fields said, gathered in one pass.
type message struct {
	database, table []byte
	tbl             changelog.Table
	typ             string
	isDdl           bool
	data, old       []changelog.Row
	hasData, hasOld bool
	// mysqlType and pkNames are the JSON text of those fields, nil when
	// absent or null.
	mysqlType, pkNames []byte
}

// recordError is a refused record before it gets its position and table.
type recordError = jsonrecord.Error

// Hints shared by several errors.
const (
	hintJSON = "each record must be one Canal flat message in JSON (one per line in a file); " +
		"check that Canal writes flat messages (canal.mq.flatMessage = true)"
	hintMalformed = "the record is not a well-formed Canal flat message; check the producer of this topic or file"
	hintTable     = `Canal names the table in the "database" and "table" fields; check for a producer that drops them`
)

// Decode decodes one record. See the package documentation for what a
// record becomes.
func (d *Decoder) Decode(data []byte, pos changelog.Position) ([]changelog.Change, error) {
	return d.DecodeIn(nil, data, pos)
}

// DecodeIn is Decode with the changes and their rows in a
// (format.ArenaDecoder).
func (d *Decoder) DecodeIn(a *changelog.Arena, data []byte, pos changelog.Position) ([]changelog.Change, error) {
	var m message
	return d.env.Decode(data, pos,
		func() ([]changelog.Change, error) { return d.decode(a, data, &m) },
		func(error) string { return jsonrecord.NamedTable(m.tbl, data) })
}

// schemaChange returns the row-less changelog.SchemaChange change a DDL
// message is, naming its table, or only its database when it names none.
func (d *Decoder) schemaChange(a *changelog.Arena, m *message) []changelog.Change {
	t := m.tbl
	if t.Name == "" {
		t = d.env.Table(m.database, nil)
	}
	cs := a.Changes(1)
	cs[0] = changelog.Change{Kind: changelog.SchemaChange, Table: t}
	return cs
}

// decode returns the record's changes, none when it is a message without
// rows (skipped).
func (d *Decoder) decode(a *changelog.Arena, data []byte, m *message) (cs []changelog.Change, err error) {
	s := d.env.Scanner(a, data)
	seen, err := d.env.ReadRecord(&s, fields, hintMalformed, func(f int) (err error) {
		switch f {
		case fDatabase:
			m.database, err = jsonrecord.ReadName(&s, "database", hintMalformed)
		case fTable:
			m.table, err = jsonrecord.ReadName(&s, "table", hintMalformed)
		case fType:
			m.typ, err = jsonrecord.ReadEnum(&s, "type", hintMalformed, false, rowTypes)
		case fIsDdl:
			err = readIsDdl(&s, m)
		case fData:
			m.data, m.hasData, err = readRows(&s, "data", false)
		case fOld:
			m.old, m.hasOld, err = readRows(&s, "old", true)
		case fMysqlType:
			m.mysqlType, err = rawValue(&s)
		case fPkNames:
			m.pkNames, err = rawValue(&s)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(m.table) > 0 {
		m.tbl = d.env.Table(m.database, m.table)
	}

	if !seen.Has(fType) {
		return nil, &recordError{Reason: `record has no "type" field: it is not a Canal flat message`, Hint: hintJSON}
	}
	var kind changelog.Kind
	switch m.typ {
	case "INSERT":
		kind = changelog.Insert
	case "UPDATE":
		kind = changelog.UpdateAfter
	case "DELETE":
		kind = changelog.Delete
	case "TRUNCATE":
		return nil, &recordError{
			Reason: `truncate messages (type "TRUNCATE") are not supported`,
			Hint: "txsink does not apply TRUNCATE; filter truncate messages out before txsink " +
				"(or truncate the target table yourself and restart from a position after this record)",
		}
	case "CREATE", "ALTER", "ERASE", "RENAME", "CINDEX", "DINDEX":
		return d.schemaChange(a, m), nil
	case "QUERY", "INIT", "GTID", "XACOMMIT", "XAROLLBACK", "MHEARTBEAT":
		if m.isDdl {
			return d.schemaChange(a, m), nil
		}
		return nil, nil
	default:
		if m.isDdl {
			return d.schemaChange(a, m), nil
		}
		return nil, &recordError{
			Reason: "unknown type " + strconv.Quote(m.typ),
			Hint: `Canal row types are "INSERT", "UPDATE" and "DELETE" (DDL messages have "isDdl": true); ` +
				"check that the records come from Canal",
		}
	}
	if m.isDdl {
		return nil, &recordError{
			Reason: strconv.Quote(m.typ) + ` message has "isDdl": true`,
			Hint:   hintMalformed,
		}
	}
	if m.tbl.Name == "" {
		return nil, &recordError{Reason: `record has no "table"`, Hint: hintTable}
	}
	if !m.hasData {
		return nil, &recordError{
			Reason: m.typ + ` message has no "data"`,
			Hint:   `Canal writes the rows in "data" for INSERT, UPDATE and DELETE; the record is incomplete, check its producer`,
		}
	}
	if kind == changelog.UpdateAfter && (!m.hasOld || len(m.old) != len(m.data)) {
		reason := `UPDATE message has no "old"`
		if m.hasOld {
			reason = `UPDATE message has ` + strconv.Itoa(len(m.data)) + ` rows in "data" but ` + strconv.Itoa(len(m.old)) + ` in "old"`
		}
		return nil, &recordError{
			Reason: reason,
			Hint: `Canal writes one "old" entry per row of "data" with the previous values of the changed columns; ` +
				"without it txsink cannot tell whether the update changed the row's key; check the producer",
		}
	}

	if len(m.data) == 0 {
		return nil, nil // "data": [], no rows
	}
	types := d.types.lookup(m.mysqlType, m.pkNames)
	cs = a.Changes(len(m.data))
	for i, row := range m.data {
		c := &cs[i]
		c.Kind, c.Table, c.Types = kind, m.tbl, types
		switch kind {
		case changelog.Insert:
			c.After = row
		case changelog.UpdateAfter:
			c.After = row
			c.Before = jsonrecord.Overlay(row, m.old[i])
		case changelog.Delete:
			c.Before = row
		}
	}
	return cs, nil
}

// readRows reads "data" or "old": an array of row objects, or null (ok
// false). In "old" an element may be null or {} (no column changed); in
// "data" every element must be an object with columns.
func readRows(s *jsonscan.Scanner, field string, old bool) (rows []changelog.Row, ok bool, err error) {
	switch s.Peek() {
	case '[':
	case 'n':
		_, err = s.Value() // checks the literal
		return nil, false, err
	default:
		tok, err := s.Value()
		if err != nil {
			return nil, false, err
		}
		return nil, false, &recordError{Reason: strconv.Quote(field) + " must be an array or null, not a " + tok.Kind.String(), Hint: hintMalformed}
	}
	s.Skip(1) // '['
	if s.Peek() == ']' {
		s.Skip(1)
		return nil, true, nil
	}
	for i := 0; ; i++ {
		elem := func() string { return strconv.Quote(field) + "[" + strconv.Itoa(i) + "]" }
		switch c := s.Peek(); {
		case c == '{':
			row, err := s.Row()
			if errors.Is(err, jsonscan.ErrDuplicateColumn) {
				return nil, false, &recordError{Reason: elem() + ": " + err.Error(), Hint: hintMalformed}
			}
			if err != nil {
				return nil, false, jsonrecord.InImage(err, elem())
			}
			if row.IsZero() && !old {
				return nil, false, &recordError{Reason: elem() + " has no columns", Hint: hintMalformed}
			}
			rows = append(rows, row)
		case c == 'n' && old:
			if _, err := s.Value(); err != nil {
				return nil, false, err
			}
			rows = append(rows, changelog.Row{})
		default:
			tok, err := s.Value()
			if err != nil {
				return nil, false, err
			}
			return nil, false, &recordError{Reason: elem() + " must be an object, not a " + tok.Kind.String(), Hint: hintMalformed}
		}
		switch s.Peek() {
		case ',':
			s.Skip(1)
		case ']':
			s.Skip(1)
			return rows, true, nil
		default:
			return nil, false, syntaxError(s, "',' or ']'")
		}
	}
}

// syntaxError reports malformed JSON at the scanner's position, in the
// scanner's own terms.
func syntaxError(s *jsonscan.Scanner, want string) error {
	if s.Pos() >= len(s.Data()) {
		return &jsonscan.SyntaxError{Offset: s.Pos(), Msg: "unexpected end of input, want " + want}
	}
	return &jsonscan.SyntaxError{Offset: s.Pos(), Msg: "unexpected " + strconv.QuoteRune(rune(s.Data()[s.Pos()])) + ", want " + want}
}

func readIsDdl(s *jsonscan.Scanner, m *message) error {
	tok, err := s.Value()
	if err != nil {
		return err
	}
	switch tok.Kind {
	case jsonscan.True:
		m.isDdl = true
		return nil
	case jsonscan.False, jsonscan.Null:
		return nil
	}
	return &recordError{Reason: `"isDdl" must be a boolean, not a ` + tok.Kind.String(), Hint: hintMalformed}
}
