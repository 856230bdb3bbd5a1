// Package ogg decodes Oracle GoldenGate change records in JSON (the
// GoldenGate for Big Data JSON formatter, as written to Kafka), the format
// called "ogg-json".
//
// A record is one operation:
//
//	{"table":"OGG.TBL_TEST","pos":"00000000000000000000152","primary_keys":["id"],
//	 "before":{"id":106,"name":"hammer","weight":1},
//	 "after":{"id":106,"name":"hammer","weight":1.5},
//	 "op_type":"U","op_ts":"2020-05-13 17:26:27.936000","current_ts":"2020-05-13T17:26:28.000000"}
//
// What a record becomes:
//
//	op_type "I"  one +I change with After
//	op_type "U"  one +U change with After, and Before (so the engine can see
//	             a key change; no separate -U is emitted)
//	op_type "D"  one -D change with Before
//	op_type "T"  an error: txsink does not apply TRUNCATE
//	tombstone    (empty, white space or null) no change and no error
//
// Quirks handled:
//
//   - "table" is "SCHEMA.TABLE": the namespace is the part before the first
//     dot, the name the rest. A table without a dot has no namespace.
//   - An update without a "before" image (GoldenGate's GETUPDATEBEFORES off)
//     is an error, because txsink cannot tell whether it changed the key,
//     unless OptionAllowMissingBefore is set.
//   - "pos", "op_ts", "current_ts" (whose formats differ: "2020-05-13
//     15:40:06.000000" and "2020-05-13T13:39:35.766000") and "primary_keys"
//     are not used, and neither is any other field, such as a nested "source"
//     object some pipelines add. Records are applied in the order they come,
//     not in the order of "pos" or "op_ts", which are not monotonic.
//
// Values keep their exact JSON text: numbers become changelog.Number,
// strings stay strings, nested objects and arrays become changelog.JSON; the
// target column's type decides later what they mean.
//
// Every error is a *format.Error naming the record's position, its table
// when known, and a hint.
package ogg

import (
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/internal/envelope"
	"github.com/txsink/txsink/format/internal/jsonrecord"
	"github.com/txsink/txsink/format/internal/jsonscan"
)

// Name is the format's name in the pipeline config.
const Name = "ogg-json"

// OptionAllowMissingBefore, when "true", lets an update without a "before"
// image decode as a plain +U. Without it such a record is an error, because
// txsink cannot tell whether the update changed the row's key.
const OptionAllowMissingBefore = "ogg.allow-missing-before"

// Decoder decodes ogg-json records. It is safe for concurrent use.
type Decoder struct {
	allowMissingBefore bool
	// lastTable is the table of the latest record, and the text it was
	// split from. Records of one table follow each other, so reusing its
	// strings saves two allocations per record.
	lastTable atomic.Pointer[cachedTable]
	// env interns the column names of row images.
	env envelope.Reader
}

type cachedTable struct {
	text  string
	table changelog.Table
}

var _ format.Decoder = (*Decoder)(nil)

// New returns a Decoder configured by opts; the only option is
// OptionAllowMissingBefore. An unknown option is an error.
func New(opts format.Options) (*Decoder, error) {
	if err := opts.Check(Name, OptionAllowMissingBefore); err != nil {
		return nil, err
	}
	allow, err := opts.Bool(Name, OptionAllowMissingBefore, false)
	if err != nil {
		return nil, err
	}
	return &Decoder{allowMissingBefore: allow, env: envelope.Reader{Format: Name, HintJSON: hintJSON}}, nil
}

// The fields of a record ogg reads, by their index in fields.
const (
	fTable = iota
	fOpType
	fBefore
	fAfter
)

var fields = envelope.NewFields("table", "op_type", "before", "after")

// opTypes are the values of "op_type" txsink knows.
var opTypes = []string{"I", "U", "D", "T"}

// record is what a record's fields said, gathered in one pass.
type record struct {
	table             []byte
	tbl               changelog.Table
	opType            string
	before, after     changelog.Row
	hasBefore, hasAft bool
}

// recordError is a refused record before it gets its position and table.
type recordError = jsonrecord.Error

// Hints shared by several errors.
const (
	hintJSON = "each record must be one GoldenGate operation in JSON (one per line in a file); " +
		"check that GoldenGate for Big Data writes with the JSON formatter (gg.handler.*.format=json)"
	hintMalformed = "the record is not a well-formed GoldenGate JSON operation; check the producer of this topic or file"
	hintTable     = `GoldenGate names the table in the "table" field ("SCHEMA.TABLE"); check for a producer that drops it`
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
		func(error) string { return tableOf(data, &r) })
}

func (d *Decoder) decode(a *changelog.Arena, data []byte, r *record) ([]changelog.Change, error) {
	s := d.env.Scanner(a, data)
	seen, err := d.env.ReadRecord(&s, fields, hintMalformed, func(f int) (err error) {
		switch f {
		case fTable:
			r.table, err = jsonrecord.ReadName(&s, "table", hintMalformed)
		case fOpType:
			r.opType, err = jsonrecord.ReadEnum(&s, "op_type", hintMalformed, false, opTypes)
		case fBefore:
			r.before, r.hasBefore, err = jsonrecord.ReadImage(&s, "before", hintMalformed)
		case fAfter:
			r.after, r.hasAft, err = jsonrecord.ReadImage(&s, "after", hintMalformed)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	r.tbl = d.splitTable(r.table)

	if !seen.Has(fOpType) {
		return nil, &recordError{Reason: `record has no "op_type" field: it is not a GoldenGate JSON operation`, Hint: hintJSON}
	}
	var kind changelog.Kind
	switch r.opType {
	case "I":
		kind = changelog.Insert
	case "U":
		kind = changelog.UpdateAfter
	case "D":
		kind = changelog.Delete
	case "T":
		return nil, &recordError{
			Reason: `truncate operations (op_type "T") are not supported`,
			Hint: "txsink does not apply TRUNCATE; exclude truncates in GoldenGate (GETTRUNCATES is off by default) " +
				"or filter them out before txsink",
		}
	default:
		return nil, &recordError{
			Reason: "unknown op_type " + strconv.Quote(r.opType),
			Hint:   `GoldenGate op_type values are "I" (insert), "U" (update), "D" (delete) and "T" (truncate); check that the records come from GoldenGate's JSON formatter`,
		}
	}
	if r.tbl.Name == "" {
		return nil, &recordError{Reason: `record has no "table"`, Hint: hintTable}
	}

	cs := a.Changes(1)
	c := &cs[0]
	c.Kind, c.Table = kind, r.tbl
	switch kind {
	case changelog.Insert, changelog.UpdateAfter:
		if !r.hasAft {
			return nil, &recordError{
				Reason: opName(r.opType) + ` record has no "after" image`,
				Hint:   `GoldenGate writes the new row in "after" for op_type I and U; the record is incomplete, check the formatter settings`,
			}
		}
		c.After = r.after
		if kind == changelog.UpdateAfter {
			if !r.hasBefore && !d.allowMissingBefore {
				return nil, &recordError{
					Reason: `update record has no "before" image`,
					Hint: "txsink needs the before image to see key changes: enable GETUPDATEBEFORES in the GoldenGate extract; " +
						"if the key columns of this table never change, set the format option " + OptionAllowMissingBefore + `: "true" instead`,
				}
			}
			c.Before = r.before
		}
	case changelog.Delete:
		if !r.hasBefore {
			return nil, &recordError{
				Reason: `delete record has no "before" image`,
				Hint:   "txsink needs the key of the deleted row; check that the GoldenGate trail carries before images of deletes",
			}
		}
		c.Before = r.before
	}
	return cs, nil
}

func opName(op string) string {
	switch op {
	case "I":
		return "insert"
	case "U":
		return "update"
	}
	return "op_type " + strconv.Quote(op)
}

// splitTable splits "SCHEMA.TABLE" at the first dot, reusing the strings
// of the cached table when the text matches.
func (d *Decoder) splitTable(text []byte) changelog.Table {
	if len(text) == 0 {
		return changelog.Table{}
	}
	if t := d.lastTable.Load(); t != nil && string(text) == t.text {
		return t.table
	}
	t := &cachedTable{text: string(text)}
	t.table = splitName(t.text)
	d.lastTable.Store(t)
	return t.table
}

// splitName splits "SCHEMA.TABLE" at the first dot; a name without a dot
// has no namespace.
func splitName(s string) changelog.Table {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return changelog.Table{Namespace: s[:i], Name: s[i+1:]}
	}
	return changelog.Table{Name: s}
}

// tableOf names the table of a record that failed to decode: the one it
// read, or else the one a lenient look finds.
func tableOf(data []byte, r *record) string {
	if r.tbl.Name == "" {
		return findTable(data)
	}
	return r.tbl.String()
}

// findTable names the table of a record that failed to decode, by a lenient
// look at its top-level "table" field: an error can come before it in the
// text. It gives up at the first syntax error, and returns "" when the
// record names no table.
func findTable(data []byte) string {
	s := jsonscan.New(data)
	s.TolerateBadText() // the refusal may be a value that is not text
	if s.Peek() != '{' || s.BeginObject() != nil {
		return ""
	}
	for first := true; ; first = false {
		key, ok, err := s.NextKey(first)
		if err != nil || !ok {
			return ""
		}
		tok, err := s.Value()
		if err != nil {
			return ""
		}
		if tok.Kind == jsonscan.String && s.Equal(key, "table") {
			if t := splitName(s.Text(tok)); t.Name != "" {
				return t.String()
			}
			return ""
		}
	}
}
