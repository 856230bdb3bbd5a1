package engine

// Creating a missing target table from the changelog's own declaration
// of it (schema: {create: missing}): which declaration and key, the
// refusals, and the one place the engine runs DDL.

import (
	"context"
	"errors"
	"strings"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/formats"
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/schema/coltype"
	"github.com/txsink/txsink/sink"
)

// SchemaError is a target table schema.create: missing cannot create, or
// a configuration with which it cannot create any. The pipeline stops:
// what to do is the user's (the Hint).
type SchemaError struct {
	// Table is the target table, "" when the refusal is the format's.
	Table string
	// Reason says why, Hint what to do.
	Reason, Hint string
}

// Error returns "Reason: Hint".
func (e *SchemaError) Error() string { return e.Reason + ": " + e.Hint }

// Kind reports errkind.Permanent: no retry creates the table.
func (e *SchemaError) Kind() errkind.Kind { return errkind.Permanent }

// Where names the table.
func (e *SchemaError) Where() errkind.Where { return errkind.Where{Table: e.Table} }

// hintCreate is the fix every refusal shares.
const hintCreate = "create the table yourself"

// hintUntyped is what to do about a table whose records carry no types,
// the three ways issue #26 names, for the tables entry of pattern entry.
func hintUntyped(entry string) string {
	return "declare its columns in the tables entry for " + entry + " (columns: [{name: id, type: bigint}, ...]; " +
		"txsink schema --config F prints the statement), or have the records carry types (Debezium's schema envelope: " +
		"value.converter.schemas.enable=true in the connector; txsink-json: a \"types\" member; or read canal-json), or " + hintCreate
}

// TypedFormat returns nil when cfg's format can declare the types a table
// is created from, or a tables entry declares its columns, and a
// *SchemaError saying so when schema.create: missing is set with a format
// whose records carry none and no entry declares any: no table could
// ever be created. With some entries declaring columns, a missing table
// of an entry that declares none is refused on its own (Creatable, and
// Declaration at its first change).
func TypedFormat(cfg *config.Config) error {
	if !cfg.CreatesTables() || typedFormat(cfg) {
		return nil
	}
	for i := range cfg.Tables {
		if len(cfg.Tables[i].Columns) > 0 {
			return nil
		}
	}
	return &SchemaError{
		Reason: "schema.create: missing cannot create target tables from " + cfg.Source.Format +
			" records: they carry no column types, and txsink never guesses a type from values",
		Hint: "declare each table's columns in its tables entry (columns: [{name: id, type: bigint}, ...]; txsink schema " +
			"--config F prints the statements), or create the target tables yourself (and set schema.create: none), or read a format that " +
			"declares types: debezium-json with the schema envelope (value.converter.schemas.enable=true), or canal-json",
	}
}

// typedFormat reports whether cfg's format is a format.TypeDeclarer (or
// one the decoder refuses, with its own message).
func typedFormat(cfg *config.Config) bool {
	dec, err := formats.New(cfg.Source.Format, format.Options(cfg.Source.FormatOptions))
	if err != nil {
		return true // refused where the decoder is made, with its own message
	}
	_, ok := dec.(format.TypeDeclarer)
	return ok
}

// Creatable returns nil when schema.create: missing can create the
// missing table name of entry tc before any change of it is read: tc
// declares its columns, or the format's records may declare them; else a
// *SchemaError naming the entry and what to do, with which txsink run
// refuses to start.
func Creatable(cfg *config.Config, tc *config.Table, name schema.Name) error {
	if len(tc.Columns) > 0 || typedFormat(cfg) {
		return nil
	}
	return &SchemaError{Table: name.String(), Reason: "the target table " + name.String() +
		" does not exist, and schema.create: missing cannot create it: " + cfg.Source.Format +
		" records carry no column types, and its tables entry declares no columns", Hint: hintUntyped(tc.Source)}
}

// Declared returns the table entry tc declares (tables[].columns), keyed
// by its primary-key (none for append-only), its key columns NOT NULL;
// nil when tc declares no columns. A type txsink does not know stays
// Unsupported, for the dialect to refuse naming the column.
func Declared(tc *config.Table) (*coltype.Table, error) {
	if len(tc.Columns) == 0 {
		return nil, nil
	}
	key := tc.PrimaryKey
	if tc.AppendOnly {
		key = nil
	}
	t := &coltype.Table{From: "the columns of tables entry " + tc.Source, Columns: make([]coltype.Column, len(tc.Columns))}
	for i := range tc.Columns {
		c := &tc.Columns[i]
		t.Columns[i] = coltype.Column{Name: c.Name, Type: coltype.ParseMySQL(c.Type), Nullable: c.Nullable(key)}
		if c.Default != nil {
			t.Columns[i].Default = *c.Default
		}
	}
	return t.WithKey(key)
}

// Declaration returns the table txsink creates at name for change c of
// tables entry tc: the columns the entry declares (tables[].columns),
// which win over any the record declares; else the columns c's record
// declares, keyed by the entry's primary-key, else by the key the record
// declares (Canal's pkNames; Debezium's record key schema,
// format.KeyTyper), with no key for an append-only table, and for a
// history table (mode: history) with no key, every column NULL-able and
// the columns txsink fills (reduce.HistoryDeclaration). c may be nil
// when tc declares its columns. A record without types, or whose types
// cannot be read, or a table without a key, is a *SchemaError saying what
// to do.
func Declaration(tc *config.Table, name schema.Name, c *changelog.Change) (*coltype.Table, error) {
	fail := func(reason, hint string) error {
		return &SchemaError{Table: name.String(), Reason: "the target table " + name.String() +
			" does not exist, and schema.create: missing cannot create it: " + reason, Hint: hint}
	}
	if len(tc.Columns) > 0 {
		decl, err := Declared(tc)
		if err != nil {
			return nil, fail(err.Error(), "declare the primary-key columns in the entry's columns")
		}
		return decl, nil
	}
	var t *coltype.Table
	if c != nil {
		t = c.Types
	}
	switch {
	case t == nil:
		return nil, fail("the record carries no column types (maxwell-json, ogg-json and flink-changelog-json records never do, "+
			"nor does a Debezium record without the schema envelope, a Canal message without mysqlType or a txsink-json line without \"types\"), and its tables entry declares no columns",
			hintUntyped(tc.Source))
	case t.Invalid != "":
		return nil, fail(t.From+" cannot be read: "+t.Invalid, hintCreate)
	}
	key := tc.PrimaryKey
	switch {
	case tc.IsHistory():
		return reduce.HistoryDeclaration(t), nil
	case tc.AppendOnly:
		key = nil
	case len(key) == 0 && len(t.Key) == 0:
		return nil, fail(t.From+" does not say which columns form the primary key",
			"set primary-key on its tables entry (or append-only: true for a table that only receives inserts), or "+hintCreate)
	case len(key) == 0:
		key = t.Key
	}
	keyed, err := t.WithKey(key)
	if err != nil {
		return nil, fail(err.Error(), "set primary-key to columns "+t.From+" declares")
	}
	return keyed, nil
}

// Statements returns the statements cr would create the missing table
// name of entry tc with, for change c (nil will do when tc declares its
// columns), and the declaration they make, running nothing. When the
// target refuses a declared column (a type it has no column for, a
// default the column cannot hold), the hint says to correct the entry.
func Statements(cr sink.Creator, tc *config.Table, name schema.Name, c *changelog.Change) ([]string, *coltype.Table, error) {
	decl, err := Declaration(tc, name, c)
	if err != nil {
		return nil, nil, err
	}
	stmts, err := cr.CreateStatements(name, decl)
	var se *sink.Error
	if err != nil && len(tc.Columns) > 0 && errors.As(err, &se) && se.Hint != "" {
		se.Hint = "correct the column in the columns of tables entry " + tc.Source + ", or " + se.Hint
	}
	return stmts, decl, err
}

// createTable creates the missing table name for change c of entry tc.
func (e *Engine) createTable(ctx context.Context, tc *config.Table, name schema.Name, c *changelog.Change) error {
	cr, ok := e.target.(sink.Creator)
	if !ok {
		return &SchemaError{Table: name.String(), Reason: "schema.create: missing: the target cannot create tables", Hint: hintCreate}
	}
	stmts, decl, err := Statements(cr, tc, name, c)
	if err != nil {
		return err
	}
	if err := cr.Create(ctx, name, decl); err != nil {
		return err
	}
	e.log.Info("created a missing target table from its declaration", "table", name.String(),
		"from", decl.From, "pos", c.Pos.String(), "ddl", strings.Join(stmts, "; "))
	return nil
}
