// Package coltype is the source's own description of a table, in terms
// no source or target owns: each column's type (a Kind with its
// precision, scale, length, fractional seconds or values), whether it
// takes NULL, and the primary key. The formats that carry types fill it
// in (Debezium's Kafka Connect schema, Canal's mysqlType and pkNames) once
// per distinct schema they read, and every change of the table points at
// that one value; a target's dialect turns it into CREATE TABLE.
//
// It describes what the source declares, never what its values look
// like: txsink does not guess a type from a JSON value.
//
// It imports nothing of txsink's, so package changelog can carry it.
package coltype

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is the family of a source column's type.
type Kind uint8

// The kinds. A Type's other fields say which of them apply.
const (
	// Unsupported is a type txsink cannot create a column for (a
	// geometry, a Connect struct): Type.Why says why.
	Unsupported Kind = iota
	// Bool is a boolean.
	Bool
	// Int is an integer of Bits bits (8, 16, 24, 32, 64), Unsigned or not.
	Int
	// Float is a binary floating-point number of Bits bits (32 or 64).
	Float
	// Decimal is an exact number: Precision digits in all (0: as many as
	// the values need), Scale of them after the point (VariableScale: any).
	Decimal
	// String is text: at most Length characters (0: unbounded), Fixed
	// for a CHAR(n).
	String
	// Bytes is binary data: at most Length bytes (0: unbounded), Fixed
	// for a BINARY(n).
	Bytes
	// Date is a calendar date.
	Date
	// Time is a time of day with Frac fractional-second digits.
	Time
	// DateTime is a date and wall-clock time without a time zone, with
	// Frac fractional-second digits (MySQL DATETIME, PostgreSQL timestamp,
	// Debezium's Timestamp, MicroTimestamp and NanoTimestamp).
	DateTime
	// Timestamp is an instant, with a time zone or in UTC, with Frac
	// fractional-second digits (Debezium's ZonedTimestamp, MySQL
	// TIMESTAMP, PostgreSQL timestamptz).
	Timestamp
	// JSON is a JSON document.
	JSON
	// UUID is a UUID.
	UUID
	// Enum is one of Values.
	Enum
)

var kindNames = [...]string{"unsupported", "bool", "int", "float", "decimal", "string", "bytes", "date", "time", "datetime", "timestamp", "json", "uuid", "enum"}

// String returns the kind's lower-case name.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// MaxFrac is the most fractional-second digits a target column holds
// (MySQL, MariaDB and PostgreSQL stop at microseconds). A source type with
// more (Debezium's NanoTimestamp) is created with MaxFrac, and a value
// whose nanoseconds are not zero is refused, not rounded.
const MaxFrac = 6

// VariableScale is the Scale of a Decimal whose values each carry a scale
// of their own (Debezium's VariableScaleDecimal).
const VariableScale = -1

// Type is one source column's type.
type Type struct {
	Kind Kind
	// Bits is the width of an Int or Float.
	Bits int
	// Unsigned marks an unsigned Int.
	Unsigned bool
	// Precision and Scale apply to a Decimal.
	Precision, Scale int
	// Length bounds a String (characters) or Bytes (bytes); 0 is none.
	Length int
	// Fixed marks a fixed-length String or Bytes (CHAR(n), BINARY(n)).
	Fixed bool
	// Frac is the fractional-second digits of a Time, DateTime or
	// Timestamp (0 to MaxFrac).
	Frac int
	// Values are an Enum's allowed values, in order.
	Values []string
	// Source is the type as the source names it ("decimal(10,2)",
	// "io.debezium.time.MicroTimestamp"), for messages.
	Source string
	// Why says why an Unsupported type has no column type.
	Why string
}

// String renders the type for messages: its kind and parameters, and the
// source's name for it.
func (t Type) String() string {
	var s string
	switch t.Kind {
	case Int:
		s = fmt.Sprintf("int%d", t.Bits)
		if t.Unsigned {
			s = "u" + s
		}
	case Float:
		s = fmt.Sprintf("float%d", t.Bits)
	case Decimal:
		switch {
		case t.Scale == VariableScale:
			s = "decimal(variable scale)"
		case t.Precision == 0:
			s = fmt.Sprintf("decimal(?,%d)", t.Scale)
		default:
			s = fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale)
		}
	case String, Bytes:
		s = t.Kind.String()
		if t.Length > 0 {
			s += fmt.Sprintf("(%d)", t.Length)
		}
		if t.Fixed {
			s += " fixed"
		}
	case Time, DateTime, Timestamp:
		s = fmt.Sprintf("%s(%d)", t.Kind, t.Frac)
	case Enum:
		s = "enum(" + strings.Join(t.Values, ",") + ")"
	default:
		s = t.Kind.String()
	}
	if t.Source != "" {
		s += " [" + t.Source + "]"
	}
	return s
}

// Column is one source column.
type Column struct {
	// Name is the column's name as the source spells it.
	Name string
	// Type is its type.
	Type Type
	// Nullable reports that the source declares it optional (NULL-able).
	Nullable bool
	// Default is the value the source gives the column when a row
	// leaves it out (Debezium's schema field "default"), decoded as the
	// column's values are: a decimal's or an integer's exact text (a
	// json.Number), a date or time as text, bytes as []byte; nil when the
	// source declares none. A created table's column, and an added one,
	// get it as their DEFAULT.
	Default any
}

// String renders the column for messages: "name type", and "not null"
// when the source declares it required.
func (c Column) String() string {
	s := c.Name + " " + c.Type.String()
	if !c.Nullable {
		s += " not null"
	}
	return s
}

// Table is the source's description of one table: its columns in the
// source's order and, when the source says, its primary key.
type Table struct {
	// Columns lists the columns in the source's order.
	Columns []Column
	// Key lists the primary-key columns in key order; empty when the
	// source does not say (Debezium's value schema does not).
	Key []string
	// From names where the description came from ("the Kafka Connect
	// schema", "mysqlType"), for messages.
	From string
	// Invalid, when not "", says why the declaration cannot be read: no
	// table is created from it. The changes themselves decode as they
	// would without it.
	Invalid string
}

// Column returns the column called name (compared without regard to
// case when no exact match exists), and whether there is one.
func (t *Table) Column(name string) (*Column, bool) {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i], true
		}
	}
	for i := range t.Columns {
		if strings.EqualFold(t.Columns[i].Name, name) {
			return &t.Columns[i], true
		}
	}
	return nil, false
}

// WithKey returns t with key as its primary key, the key columns made
// NOT NULL (a primary key takes no NULL), or an error naming a key column
// t lacks. t itself is shared by many changes and stays as it is.
func (t *Table) WithKey(key []string) (*Table, error) {
	out := &Table{Columns: append([]Column(nil), t.Columns...), From: t.From}
	for _, k := range key {
		c, ok := out.Column(k)
		if !ok {
			return nil, fmt.Errorf("primary-key column %s is not among the columns %s declares (%s)", k, t.From, strings.Join(t.names(), ", "))
		}
		c.Nullable = false
		out.Key = append(out.Key, c.Name)
	}
	return out, nil
}

func (t *Table) names() []string {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	return names
}
