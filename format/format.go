// Package format defines how txsink reads changelog records: the Decoder
// interface every source format implements, the per-format Options, and the
// *Error a decoder returns for a record it cannot decode.
//
// The formats themselves live in subpackages, which import this package:
//
//	format/debezium   "debezium-json":        Debezium change events, with or without the Kafka Connect schema envelope
//	format/canal      "canal-json":           Canal flat messages (many rows per message, values as strings)
//	format/maxwell    "maxwell-json":         Maxwell rows, with xid/commit transaction marks
//	format/ogg        "ogg-json":             Oracle GoldenGate JSON
//	format/flinkjson  "flink-changelog-json": Flink CDC's changelog-json ({"data":..., "op":"+I"})
//	format/native     "txsink-json":          txsink's own line format, and its encoder
//	format/formats    the registry: formats.New(name, opts) picks a decoder by its configured name
//
// The registry is a package of its own, not a map in this package filled by
// init functions, because this package cannot import the subpackages (they
// import it) and a registry filled by init only works when every caller
// remembers a blank import. formats imports each format explicitly, so a
// format that compiles is a format that is registered.
package format

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/schema/coltype"
)

// Decoder turns one source record (one message, one line) into changes.
//
// Implementations must be safe for concurrent use by several goroutines, so
// a pipeline can decode partitions in parallel with one Decoder.
type Decoder interface {
	// Decode returns the changes the record holds, in order. A tombstone or
	// a record with no row event (a transaction boundary, for example)
	// returns no changes and no error.
	//
	// pos is the position of the record; every returned change gets
	// Pos = pos, and Size ≈ len(data)/number of changes.
	//
	// Decode neither modifies data nor keeps a reference to it: the caller
	// may reuse the buffer as soon as Decode returns. An error is always a
	// *Error: the record is bad input, and decoding it again fails again.
	Decode(data []byte, pos changelog.Position) ([]changelog.Change, error)
}

// ArenaDecoder is a Decoder that can place the changes it decodes, their
// row values and the headers those are boxed in, in an arena the caller
// recycles (see changelog.Arena for the rule that makes it safe). A
// caller that copies what it keeps of each change before it resets the
// arena saves the collector most of decoding's garbage.
type ArenaDecoder interface {
	Decoder
	// DecodeIn is Decode with the changes in a; a nil a is Decode.
	DecodeIn(a *changelog.Arena, data []byte, pos changelog.Position) ([]changelog.Change, error)
}

// ColumnDeclarer is a Decoder whose records can declare the columns of
// their table's row images, as Debezium's Kafka Connect schema envelope
// does. "txsink check" uses it to know which columns the changelog sends
// beyond those its sampled images happen to carry: a NOT NULL column
// without a default that no record ever sends makes every insert fail.
type ColumnDeclarer interface {
	Decoder
	// DeclaredColumns returns the columns the record's own schema
	// declares for its row images, and whether it carries such a schema;
	// nil, false for a record without one (a bare envelope, a tombstone, a
	// transaction boundary) or one it cannot read.
	DeclaredColumns(data []byte) ([]string, bool)
}

// TypeDeclarer is a Decoder whose records can declare their table's
// column types, which it hands on in changelog.Change.Types (Debezium's
// Kafka Connect schema envelope, Canal's mysqlType). Creating a missing
// target table (schema: {create: missing}) needs one: txsink never
// guesses a type from a value.
type TypeDeclarer interface {
	Decoder
	// DeclaresTypes reports that the format's records can carry types
	// (a record may still lack them: Debezium without the envelope).
	DeclaresTypes() bool
}

// BeforeNarrower is a Decoder that can read an update's before image for
// the columns that decide the change only: those by which the engine tells
// whether the update moved the row to another key. An update's Before
// then holds at least those columns, and may lack the others, which the
// decoder checks as JSON and text only (README, "Values"). A delete's
// Before stays whole, as does that of a table never named. The engine
// names each table once it knows its key.
type BeforeNarrower interface {
	Decoder
	// NarrowBefore says that of the updates of table t only the before
	// image's columns cols are read from now on (the target's key
	// columns, by name, whatever their case in the records); no cols
	// reads the whole image again. It is safe for concurrent use with
	// decoding.
	NarrowBefore(t changelog.Table, cols []string)
}

// OrderReader is a Decoder that can read each row event's place in its
// source database's log (changelog.Change.Order), by which the engine
// drops copies a producer published again. Reading it costs every record,
// so a decoder reads it only once told: the engine tells it only for a
// source whose producer publishes copies as new records
// (source.Republisher). Until then Change.Order stays nil.
type OrderReader interface {
	Decoder
	// ReadOrders makes the changes decoded from now on carry their place
	// when their record tells it. It is safe for concurrent use with
	// decoding.
	ReadOrders()
}

// KeyTyper is a TypeDeclarer that reads a table's primary key from a
// record's key (source.Record.Key: a Kafka message's), as Debezium's key
// schema declares it. The engine hands it each record's key.
type KeyTyper interface {
	TypeDeclarer
	// KeyedTypes returns t, the types a change of the record declares,
	// with the primary key the record's key declares: one value per
	// distinct pair, shared by the changes that carry it; t itself when
	// the key declares none (no schema, not a struct, a column t lacks).
	// It is safe for concurrent use and allocates nothing for a key
	// schema and table it has seen.
	KeyedTypes(t *coltype.Table, key []byte) *coltype.Table
}

// KeyTypes keys the Types of changes, which dec decoded from a record
// whose key is key, by the key's schema, when dec is a KeyTyper and the
// record has a key; it changes nothing otherwise.
func KeyTypes(dec Decoder, changes []changelog.Change, key []byte) {
	kt, ok := dec.(KeyTyper)
	if !ok || len(key) == 0 {
		return
	}
	for i := range changes {
		if changes[i].Types != nil {
			changes[i].Types = kt.KeyedTypes(changes[i].Types, key)
		}
	}
}

// Options are per-format settings, from the pipeline config's
// source.format-options map. Keys are prefixed with the format's short name
// ("debezium.allow-missing-before") so one map can be read by any format.
type Options map[string]string

// Check returns an error naming the first key (in sorted order) of o that is
// not among known, so a misspelt option fails at start-up instead of being
// ignored. format is the format's name, for the message.
func (o Options) Check(format string, known ...string) error {
	var unknown []string
	for k := range o {
		found := false
		for _, kk := range known {
			if k == kk {
				found = true
				break
			}
		}
		if !found {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	if len(known) == 0 {
		return fmt.Errorf("format %s: unknown format option %q (this format takes no options)", format, unknown[0])
	}
	return fmt.Errorf("format %s: unknown format option %q (known options: %s)", format, unknown[0], strings.Join(known, ", "))
}

// Bool returns option key parsed as a boolean ("true", "false", "1", "0",
// ...), or def when the option is not set.
func (o Options) Bool(format, key string, def bool) (bool, error) {
	v, ok := o[key]
	if !ok {
		return def, nil
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return def, fmt.Errorf("format %s: option %s: want \"true\" or \"false\", got %q", format, key, v)
	}
	return b, nil
}

// Error is a record that cannot be decoded. It is permanent: the input is
// bad, and retrying gives the same error. It says where the record is, what
// is wrong with it and what the user can do about it.
type Error struct {
	// Pos is the position of the record.
	Pos changelog.Position
	// Format is the name of the format ("debezium-json").
	Format string
	// Table is the table the record names, "namespace.name", when known.
	Table string
	// Reason says what is wrong with the record.
	Reason string
	// Hint says what the user should do about it.
	Hint string
	// Err is the underlying error, if any (a JSON syntax error, for example).
	Err error
}

// Error reads like
//
//	debezium-json: p0.jsonl:10: table inventory.products: update event has no "before" image: <hint>
//
// with the underlying error, if any, after the reason.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Format)
	if e.Pos != (changelog.Position{}) {
		b.WriteString(": ")
		b.WriteString(e.Pos.String())
	}
	if e.Table != "" {
		b.WriteString(": table ")
		b.WriteString(e.Table)
	}
	if c := e.Cause(); c != "" {
		b.WriteString(": ")
		b.WriteString(c)
	}
	if e.Hint != "" {
		b.WriteString(": ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Kind reports errkind.BadInput: the record cannot be decoded, and never
// will be.
func (e *Error) Kind() errkind.Kind { return errkind.BadInput }

// Where names the record's position and, when the record names it, its
// table.
func (e *Error) Where() errkind.Where { return errkind.Where{Pos: e.Pos, Table: e.Table} }

// Cause is what is wrong with the record, without the format, position,
// table and hint Error puts around it: the reason, then the underlying
// error, the reason said once when the underlying error starts with it
// ("invalid JSON at byte 120: unterminated string", not "invalid JSON:
// invalid JSON at byte 120: ...").
func (e *Error) Cause() string {
	if e.Err == nil {
		return e.Reason
	}
	inner := e.Err.Error()
	if e.Reason == "" || strings.HasPrefix(inner, e.Reason) {
		return inner
	}
	return e.Reason + ": " + inner
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }
