// Package flinkjson decodes Flink CDC's changelog-json format (the
// "changelog-json" format of flink-cdc-connectors, up to version 2.2), the
// format called "flink-changelog-json".
//
// A record is one row and its Flink RowKind:
//
//	{"data":{"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.17},"op":"+U"}
//
// What a record becomes:
//
//	op "+I"    one +I change, After = data
//	op "-U"    one -U change, Before = data (the engine ignores it)
//	op "+U"    one +U change, After = data, no Before
//	op "-D"    one -D change, Before = data
//	tombstone  (empty, white space or null) no change and no error
//
// Quirks handled:
//
//   - The record does not name its table: the decoder takes it from the
//     required format option OptionTable ("namespace.name", split at the
//     first dot; a name without a dot has no namespace). One decoder serves
//     one table, so a topic of several tables needs one pipeline source per
//     table.
//   - An update is two records, -U with the old row and +U with the new
//     one. txsink upserts the +U and ignores the -U, so an update that
//     changes the key leaves the old key's row in place: the format cannot
//     tell the +U which key it replaced.
//   - Fields other than "data" and "op" are ignored.
//
// Values keep their exact JSON text: numbers become changelog.Number,
// strings stay strings, nested objects and arrays become changelog.JSON; the
// target column's type decides later what they mean.
//
// Every error is a *format.Error naming the record's position, the table
// and a hint.
package flinkjson

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/internal/envelope"
	"github.com/txsink/txsink/format/internal/jsonrecord"
	"github.com/txsink/txsink/format/internal/jsonscan"
)

// Name is the format's name in the pipeline config.
const Name = "flink-changelog-json"

// OptionTable names the table every record of the source belongs to, as
// "namespace.name" (a database or schema and a table). It is required:
// the records do not name their table.
const OptionTable = "flink-changelog-json.table"

// Decoder decodes flink-changelog-json records. It is safe for concurrent
// use.
type Decoder struct {
	table changelog.Table
	// env interns the column names of row images.
	env envelope.Reader
}

var _ format.Decoder = (*Decoder)(nil)

// New returns a Decoder for the table named by OptionTable, the format's
// only option, which is required. An unknown option is an error.
func New(opts format.Options) (*Decoder, error) {
	if err := opts.Check(Name, OptionTable); err != nil {
		return nil, err
	}
	v, ok := opts[OptionTable]
	if !ok {
		return nil, fmt.Errorf("format %s: option %s is required: the records do not name their table; "+
			`set it to the table they belong to, as "namespace.name"`, Name, OptionTable)
	}
	t := changelog.Table{Name: strings.TrimSpace(v)}
	if ns, name, found := strings.Cut(t.Name, "."); found {
		t = changelog.Table{Namespace: ns, Name: name}
	}
	if t.Name == "" {
		return nil, fmt.Errorf(`format %s: option %s: want a table as "namespace.name", got %q`, Name, OptionTable, v)
	}
	return &Decoder{table: t, env: envelope.Reader{Format: Name, HintJSON: hintJSON}}, nil
}

// Table returns the table the decoder assigns every change to.
func (d *Decoder) Table() changelog.Table { return d.table }

// The fields of a record flinkjson reads, by their index in fields.
const (
	fData = iota
	fOp
)

var fields = envelope.NewFields("data", "op")

// record is what a record's fields said, gathered in one pass.
type record struct {
	data    changelog.Row
	hasData bool
	op      changelog.Kind
	opText  string
}

// recordError is a refused record before it gets its position and table.
type recordError = jsonrecord.Error

// Hints shared by several errors.
const (
	hintJSON = `each record must be one Flink changelog-json row in JSON, {"data":{...},"op":"+I"} ` +
		"(one per line in a file); check the format the producer writes"
	hintMalformed = "the record is not a well-formed changelog-json row; check the producer of this topic or file"
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
		func(error) string { return d.table.String() })
}

func (d *Decoder) decode(a *changelog.Arena, data []byte, r *record) ([]changelog.Change, error) {
	s := d.env.Scanner(a, data)
	seen, err := d.env.ReadRecord(&s, fields, hintMalformed, func(f int) error {
		if f == fData {
			return readData(&s, r)
		}
		return readOp(&s, r)
	})
	if err != nil {
		return nil, err
	}
	if !seen.Has(fOp) {
		return nil, &recordError{Reason: `record has no "op" field`, Hint: hintJSON}
	}
	if r.op == 0 {
		return nil, &recordError{
			Reason: "unknown op " + strconv.Quote(r.opText),
			Hint:   `changelog-json ops are "+I" (insert), "-U" (update before), "+U" (update after) and "-D" (delete)`,
		}
	}
	if !r.hasData {
		return nil, &recordError{
			Reason: `record has no "data"`,
			Hint:   `changelog-json writes the row in "data" for every op; the record is incomplete, check its producer`,
		}
	}
	cs := a.Changes(1)
	c := &cs[0]
	c.Kind, c.Table = r.op, d.table
	if r.op.Upserts() {
		c.After = r.data
	} else {
		c.Before = r.data
	}
	return cs, nil
}

// readData reads "data": an object with columns, or null.
func readData(s *jsonscan.Scanner, r *record) error {
	switch s.Peek() {
	case '{':
		row, err := s.Row()
		if errors.Is(err, jsonscan.ErrDuplicateColumn) {
			return &recordError{Reason: `"data": ` + err.Error(), Hint: hintMalformed}
		}
		if err != nil {
			return jsonrecord.InImage(err, `"data"`)
		}
		if row.IsZero() {
			return &recordError{Reason: `"data" has no columns`, Hint: hintMalformed}
		}
		r.data, r.hasData = row, true
		return nil
	case 'n':
		_, err := s.Value() // checks the literal
		return err
	}
	tok, err := s.Value()
	if err != nil {
		return err
	}
	return &recordError{Reason: `"data" must be an object or null, not a ` + tok.Kind.String(), Hint: hintMalformed}
}

// readOp reads "op", leaving r.op zero for an unknown op.
func readOp(s *jsonscan.Scanner, r *record) error {
	tok, err := s.Value()
	if err != nil {
		return err
	}
	if tok.Kind != jsonscan.String {
		return &recordError{Reason: `"op" must be a string, not a ` + tok.Kind.String(), Hint: hintMalformed}
	}
	switch string(s.Bytes(tok)) {
	case "+I":
		r.op = changelog.Insert
	case "-U":
		r.op = changelog.UpdateBefore
	case "+U":
		r.op = changelog.UpdateAfter
	case "-D":
		r.op = changelog.Delete
	default:
		r.opText = s.Text(tok)
	}
	return nil
}
