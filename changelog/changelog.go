// Package changelog holds txsink's vocabulary: a Change (one row event of a
// source database), its Kind, the Table it names, its row images, the
// Position it was read at and the types its source declares. It does no
// I/O and imports nothing of txsink's but schema/coltype (which imports
// nothing), so every other package can share it.
//
// Values inside a Row are kept exactly as the source wrote them. Numbers stay
// in their decimal text (Number) until a target column's type says what they
// mean, so a DECIMAL(38,10) or a BIGINT UNSIGNED never passes through float64.
package changelog

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/txsink/txsink/schema/coltype"
)

// Kind is the kind of a row event, in Flink's RowKind vocabulary.
type Kind uint8

// The four kinds. Their String forms are the short strings the Flink
// changelog formats use.
const (
	// Insert (+I) adds a row: the After image is the new row.
	Insert Kind = iota + 1
	// UpdateBefore (-U) retracts the old image of an update. An upsert target
	// does not need it; txsink ignores it, and a lone -U never deletes.
	UpdateBefore
	// UpdateAfter (+U) is the new image of an update.
	UpdateAfter
	// Delete (-D) removes the row whose key the Before image holds.
	Delete
	// EndTxn carries no row: it marks the end of source transaction TxnID,
	// for formats whose transaction boundary is an event of its own (such
	// as Debezium's END). Its TxnEnd is true, and TxnEvents says how many
	// row events the transaction had, when the format tells. Appliers pass
	// over it; transaction assembly reads it.
	EndTxn
	// SchemaChange carries no row: the source says a definition changed
	// (Debezium's schema change topic, Canal's "isDdl", Maxwell's
	// table-alter and the like). Table names the table, or only its
	// database (Namespace) when the record names no table. It is never
	// data: appliers count it and pass over it (see Kind.Skipped).
	SchemaChange
	// Message carries no row: a message the source wrote beside its rows
	// (a PostgreSQL logical decoding message, Debezium's op "m"). Table
	// names where it was written, when the record says. Appliers count it
	// and pass over it (see Kind.Skipped).
	Message
	// Truncate carries no row: every row of Table is gone (a source's
	// TRUNCATE). It is data, at its place in its transaction: the rows
	// the changelog put in the table before it are deleted, and the
	// changes of the table after it are applied after it (package reduce
	// drops what it buffered of the table and marks the batch
	// commit.Batch.Truncate). A source emits it only when told to; one
	// change per table a TRUNCATE names.
	Truncate
)

// String returns "+I", "-U", "+U" or "-D" for the row kinds, and "END",
// "DDL", "MSG" or "TRUNCATE" for the others.
func (k Kind) String() string {
	switch k {
	case Insert:
		return "+I"
	case UpdateBefore:
		return "-U"
	case UpdateAfter:
		return "+U"
	case Delete:
		return "-D"
	case EndTxn:
		return "END"
	case SchemaChange:
		return "DDL"
	case Message:
		return "MSG"
	case Truncate:
		return "TRUNCATE"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// ParseKind reads the short string form ("+I", "-U", "+U", "-D").
func ParseKind(s string) (Kind, error) {
	switch s {
	case "+I":
		return Insert, nil
	case "-U":
		return UpdateBefore, nil
	case "+U":
		return UpdateAfter, nil
	case "-D":
		return Delete, nil
	}
	return 0, fmt.Errorf("unknown change kind %q: want +I, -U, +U or -D", s)
}

// Skipped reports whether a change of the kind is a record about the
// source rather than a row event (SchemaChange, Message): an applier
// counts it and passes over it, and never takes it for data.
func (k Kind) Skipped() bool { return k == SchemaChange || k == Message }

// Upserts reports whether the kind carries a new image to upsert (+I, +U).
func (k Kind) Upserts() bool { return k == Insert || k == UpdateAfter }

// Writes reports whether a change of the kind becomes a row write (+I,
// +U, -D): a -U is ignored (its +U is the row), and an END carries no row.
func (k Kind) Writes() bool { return k == Insert || k == UpdateAfter || k == Delete }

// Table names a table as the source names it: a namespace (database or
// schema, possibly empty) and a name.
type Table struct {
	Namespace string
	Name      string
}

// String returns "namespace.name", or "name" when there is no namespace.
func (t Table) String() string {
	if t.Namespace == "" {
		return t.Name
	}
	return t.Namespace + "." + t.Name
}

// Printable returns String, quoted as a Go string when it holds what a
// terminal or a log line would not show as it is (a NUL, a newline, an
// invalid UTF-8 byte), so a message naming a hostile table stays one
// readable line.
func (t Table) Printable() string {
	s := t.String()
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return s
	}
	return strconv.Quote(s)
}

// Value is one column value as a source format delivered it. It is one of:
//
//	nil          SQL NULL
//	bool         a boolean
//	Number       a number in its exact decimal text, as written by the source
//	string       text (also dates, times and decimals that a format writes as text)
//	[]byte       binary data (formats that carry raw bytes; JSON formats send text)
//	JSON         a JSON object or array, as raw text (for JSON columns)
//	int64        an integer produced by Go code using txsink as a library
//	float64      a float produced by Go code using txsink as a library
//
// What a value means is decided by the target column it goes to (package
// coerce): a Number 1589355606100 is epoch milliseconds for a DATETIME(3)
// column and a plain integer for a BIGINT one.
type Value = any

// Number is a JSON number kept as its exact decimal text.
type Number = json.Number

// JSON is a JSON object or array kept as raw text.
type JSON = json.RawMessage

// Row is one row image: column names and their values, in the order the
// source wrote them. Lookups scan Names; rows are narrow enough that a scan
// beats a map and saves an allocation per event.
//
// Names may be shared by many rows: decoders give the rows of a table one
// slice of names (with no room to append into), so it must never be
// modified in place. Set and append leave it intact. Values belong to the
// row alone.
type Row struct {
	Names  []string
	Values []Value
}

// Len returns the number of columns in the row.
func (r Row) Len() int { return len(r.Names) }

// IsZero reports whether the row has no columns (an absent image).
func (r Row) IsZero() bool { return len(r.Names) == 0 }

// Get returns the value of column name and whether the row has that column.
// Names are compared exactly first, then without regard to case, because
// MySQL and SQLite column names are case-insensitive.
func (r Row) Get(name string) (Value, bool) {
	if i := r.Index(name); i >= 0 {
		return r.Values[i], true
	}
	return nil, false
}

// Index returns the position of column name in the row, found as Get finds
// it, or -1 when the row lacks it.
func (r Row) Index(name string) int {
	for i, n := range r.Names {
		if n == name {
			return i
		}
	}
	for i, n := range r.Names {
		if strings.EqualFold(n, name) {
			return i
		}
	}
	return -1
}

// Set sets column name to v, appending the column if the row lacks it.
func (r *Row) Set(name string, v Value) {
	for i, n := range r.Names {
		if n == name {
			r.Values[i] = v
			return
		}
	}
	r.Names = append(r.Names, name)
	r.Values = append(r.Values, v)
}

// Position says where a change was read: which partition, how far the
// partition is consumed once this change is applied, and where a person finds
// it.
//
// Offset is what resuming needs: a byte offset just past the record for a file
// (counted over the partition's files, for a partition of several), the next
// offset for Kafka. Positions of one partition only grow.
type Position struct {
	// Partition names the ordered lane the change came from (a file path, a
	// sequence of files, a Kafka topic-partition).
	Partition string
	// File names where in the partition the record is, when the partition
	// is more than that: the file of a sequence of several files, the
	// subject of a NATS stream; "" otherwise (the partition is the file).
	File string
	// Offset is where reading resumes once this change is applied.
	Offset int64
	// Seq is the record's ordinal, 1-based (a line number within the file
	// for a file source, the Kafka offset for Kafka); used in messages.
	Seq int64
}

// String returns "partition:seq", the form an error message points at
// (a path and a line number for a file; the file rather than its
// partition when the partition is a sequence of files, the subject and
// the stream sequence for a NATS stream).
func (p Position) String() string {
	where := p.Partition
	if p.File != "" {
		where = p.File
	}
	return where + ":" + strconv.FormatInt(p.Seq, 10)
}

// Change is one row event.
//
// Before and After follow the kind: +I and +U carry After, -D carries Before
// (at least its key columns), -U carries Before. A +U may carry Before too;
// when the key in Before differs from the key in After, the update moved the
// row to a new key and txsink deletes the old key in the same commit.
type Change struct {
	Kind Kind
	// TxnEnd marks the last change of a source transaction.
	TxnEnd bool
	// TxnOrder is the change's place in its source transaction, from 1,
	// when the format says (Debezium's transaction.total_order); 0
	// otherwise. It grows within a transaction, so a change whose
	// TxnOrder is not above the last one read of its transaction is a copy
	// published again (Debezium Server after a restart).
	//
	// (TxnEnd and TxnOrder sit by Kind, in the padding before Table: the
	// change stays as large as it was before Types.)
	TxnOrder int32
	Table    Table
	Before   Row
	After    Row
	Pos      Position
	// TxnID identifies the source transaction the change belongs to, when
	// the format carries one ("" otherwise).
	TxnID string
	// Size approximates the bytes the change holds in memory; buffers count
	// it against their limits. Decoders set it to the length of the raw
	// record when they do not know better.
	//
	// (Size and TxnEvents are 32 bits, side by side, so that Order's
	// pointer keeps the change as large as it was before it.)
	Size int32
	// TxnEvents is, on an EndTxn change, the number of row events the
	// source transaction had (0 when the format does not say).
	TxnEvents int32
	// Order is the change's place in its source database's log, when the
	// format tells it and was asked to read it (format.OrderReader; see
	// Order); nil otherwise. It points into the change's arena (see
	// Arena.Order): read it, never keep it past the change.
	Order *Order
	// Types is the table as the change's record declares it (columns,
	// types, NULL-ability, key when the source says), for formats that
	// carry types (Debezium with the schema envelope, Canal); nil for the
	// others. It is parsed once per distinct schema and shared by every
	// change that has it: read it, never modify it.
	Types *coltype.Table
}

// Image returns the row image that identifies the change's row: After for
// +I and +U, Before for -D and -U.
func (c *Change) Image() Row {
	if c.Kind.Upserts() {
		return c.After
	}
	return c.Before
}

// RowOf builds a Row from alternating column names and values, as in
// RowOf("id", Number("1"), "name", "Ada"). It is meant for literals in code
// and tests, and panics when a name is not a string or a value is missing.
func RowOf(kv ...any) Row {
	if len(kv)%2 != 0 {
		panic("changelog.RowOf: odd number of arguments")
	}
	r := Row{Names: make([]string, 0, len(kv)/2), Values: make([]Value, 0, len(kv)/2)}
	for i := 0; i < len(kv); i += 2 {
		r.Names = append(r.Names, kv[i].(string))
		r.Values = append(r.Values, kv[i+1])
	}
	return r
}
