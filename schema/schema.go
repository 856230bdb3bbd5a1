// Package schema describes a target table as txsink needs it: its columns
// with their types reduced to what value conversion must know, and its
// primary key. Targets fill it in by reading their catalog; package coerce
// reads it to turn source values into exactly what a column can hold.
package schema

import (
	"fmt"
	"strings"
)

// Class is the family of a column type. It decides how a source value is read.
type Class uint8

// The column classes.
const (
	Unknown   Class = iota // a type txsink does not know; values pass as text
	Int                    // signed integer; Bits gives the width
	Uint                   // unsigned integer (MySQL UNSIGNED); Bits gives the width
	Decimal                // exact numeric; Precision and Scale apply
	Float                  // binary floating point; Bits is 32 or 64
	Bool                   // boolean (MySQL's TINYINT(1) is Int)
	String                 // character data; Length is in characters, 0 = unbounded
	Bytes                  // binary data; Length is in bytes, 0 = unbounded
	Date                   // calendar date
	DateTime               // date and time without a time zone (MySQL DATETIME, PG timestamp)
	Timestamp              // an instant (MySQL TIMESTAMP, PG timestamptz)
	Time                   // time of day
	JSON                   // JSON document
)

var classNames = [...]string{"unknown", "int", "uint", "decimal", "float", "bool", "string", "bytes", "date", "datetime", "timestamp", "time", "json"}

// String returns the class's lower-case name.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("Class(%d)", c)
}

// Column is one target column.
type Column struct {
	// Name is the column's name as the target spells it.
	Name string
	// Class is the family of the column's type.
	Class Class
	// SQLType is the type as the target's catalog writes it, for messages.
	SQLType string
	// Bits is the width of Int, Uint and Float columns (8, 16, 24, 32, 64).
	Bits int
	// Precision and Scale apply to Decimal columns: total and fractional digits.
	Precision, Scale int
	// Length is the maximum length of String (characters) and Bytes (bytes)
	// columns; 0 means unbounded.
	Length int
	// LengthInBytes says a String column's Length counts bytes of UTF-8,
	// not characters (StarRocks' CHAR and VARCHAR).
	LengthInBytes bool
	// Fixed reports a fixed-length String or Bytes column (CHAR, BINARY).
	Fixed bool
	// FracDigits is the fractional-second precision of DateTime, Timestamp
	// and Time columns (0 to 6).
	FracDigits int
	// Nullable reports whether the column accepts NULL.
	Nullable bool
	// Compare is how the target compares the column's values: which
	// spellings of a key are one row (see package collate).
	Compare Compare
	// Generated reports a column the target computes; txsink never writes it.
	Generated bool
	// HasDefault reports a column the target fills when an INSERT leaves
	// it out: it has a DEFAULT, or it is auto-increment, an identity, a
	// serial or SQLite's rowid. A NOT NULL column without one must be in
	// every row txsink inserts, or the insert fails.
	HasDefault bool
}

// CaseInsensitive reports a column whose values compare without regard to
// case, so 'ABC' and 'abc' are the same key.
func (c *Column) CaseInsensitive() bool { return c.Compare.Fold != FoldNone }

// Compare describes how a target compares the values of one column, as its
// catalog says: its collation and what that collation ignores. The zero
// value compares text byte for byte with trailing spaces significant
// (PostgreSQL's deterministic collations, SQLite's BINARY); numbers,
// decimals, UUIDs and the rest compare by value whatever Compare says
// (package collate knows each class).
type Compare struct {
	// Collation is the target's name for the column's collation
	// ("utf8mb4_general_ci", "NOCASE", "und-u-ks-level2"), for messages;
	// "" when the column has none or the target's default binary one.
	Collation string
	// Fold is how text is folded before it is compared.
	Fold Fold
	// PadSpace reports that trailing spaces are not significant: MariaDB's
	// PAD SPACE collations and CHAR columns, PostgreSQL's character(n),
	// SQLite's RTRIM.
	PadSpace bool
	// UUID reports a column of a UUID type (PostgreSQL's and MariaDB's
	// uuid), which compares by value: 'A0…' = 'a0…', with or without
	// dashes.
	UUID bool
	// Unsupported, when not "", says why txsink cannot reproduce the
	// target's comparison exactly (an ICU or UCA collation, a
	// nondeterministic one): such a column cannot be a key txsink reduces
	// by (package reduce refuses it).
	Unsupported string
}

// Fold is how a collation folds text before comparing it.
type Fold uint8

// The folds txsink reproduces exactly.
const (
	// FoldNone compares text as it is.
	FoldNone Fold = iota
	// FoldASCII folds A–Z to a–z and nothing else: SQLite's NOCASE, and
	// PostgreSQL's citext in a database whose LC_CTYPE is C or POSIX.
	FoldASCII
	// FoldLower folds each character to its simple lower case (Unicode's
	// simple case mapping): PostgreSQL's citext, which compares lower(a)
	// with lower(b), in a UTF-8 database.
	FoldLower
	// FoldGeneralCI maps each character to its weight in MariaDB's
	// utf8mb4_general_ci (and utf8mb3_general_ci): case and most accents
	// are ignored ('é' = 'E', 'ß' = 's'), and every character beyond the
	// Basic Multilingual Plane weighs the same.
	FoldGeneralCI
)

// Table is one target table.
type Table struct {
	// Namespace is the database (MySQL) or schema (PostgreSQL) holding the
	// table; "" for SQLite's main database.
	Namespace string
	// Name is the table's name.
	Name string
	// Columns lists the table's columns in their declared order.
	Columns []Column
	// PrimaryKey lists the primary-key columns in key order; empty when the
	// table has none.
	PrimaryKey []string
	// ForeignKeys lists the table's own foreign keys (those whose
	// referencing columns are its), when the target reads them.
	ForeignKeys []ForeignKey
	// UniqueKeys lists the table's UNIQUE keys besides the primary key,
	// when the target reads them.
	UniqueKeys []UniqueKey
	// Version is the target catalog's version of the table's shape, read
	// just before the table was described: it changes with every ALTER
	// TABLE, so a commit can tell that the shape its values were converted
	// for is no longer the table's. "" when the target cannot tell.
	Version string
}

// String returns "namespace.name", or "name" without a namespace.
func (t *Table) String() string {
	if t.Namespace == "" {
		return t.Name
	}
	return t.Namespace + "." + t.Name
}

// Column returns the column called name, matching case-insensitively when
// no exact match exists, and reports whether it exists.
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
