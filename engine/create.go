package engine

// Creating a missing target table from the changelog's own declaration
// of it (schema: {create: missing}): which declaration and key, the
// refusals, and the one place the engine runs DDL.

import (
	"context"
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

// TypedFormat returns nil when cfg's format can declare the types a table
// is created from, and a *SchemaError saying so when schema.create:
// missing is set with a format whose records carry none.
func TypedFormat(cfg *config.Config) error {
	if !cfg.CreatesTables() {
		return nil
	}
	dec, err := formats.New(cfg.Source.Format, format.Options(cfg.Source.FormatOptions))
	if err != nil {
		return nil // refused where the decoder is made, with its own message
	}
	if _, ok := dec.(format.TypeDeclarer); ok {
		return nil
	}
	return &SchemaError{
		Reason: "schema.create: missing cannot create target tables from " + cfg.Source.Format +
			" records: they carry no column types, and txsink never guesses a type from values",
		Hint: "create the target tables yourself (and set schema.create: none), or read a format that " +
			"declares types: debezium-json with the schema envelope (value.converter.schemas.enable=true), or canal-json",
	}
}

// Declaration returns the table txsink creates at name for change c of
// tables entry tc: the columns c's record declares, keyed by the entry's
// primary-key, else by the key the record declares (Canal's pkNames;
// Debezium's record key schema, format.KeyTyper), with no key for an append-only
// table, and for a history table (mode: history) with no key, every
// column NULL-able and the columns txsink fills (reduce.HistoryDeclaration). A record without types, or whose types cannot be read, or a
// table without a key, is a *SchemaError saying what to do.
func Declaration(tc *config.Table, name schema.Name, c *changelog.Change) (*coltype.Table, error) {
	fail := func(reason, hint string) error {
		return &SchemaError{Table: name.String(), Reason: "the target table " + name.String() +
			" does not exist, and schema.create: missing cannot create it: " + reason, Hint: hint}
	}
	t := c.Types
	switch {
	case t == nil:
		return nil, fail("the record carries no column types (a Debezium record without the schema envelope, a Canal message without mysqlType)",
			"have the producer send them (Debezium: value.converter.schemas.enable=true in the connector), or "+hintCreate)
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

// createTable creates the missing table name for change c of entry tc.
func (e *Engine) createTable(ctx context.Context, tc *config.Table, name schema.Name, c *changelog.Change) error {
	cr, ok := e.target.(sink.Creator)
	if !ok {
		return &SchemaError{Table: name.String(), Reason: "schema.create: missing: the target cannot create tables", Hint: hintCreate}
	}
	decl, err := Declaration(tc, name, c)
	if err != nil {
		return err
	}
	stmts, err := cr.CreateStatements(name, decl)
	if err != nil {
		return err
	}
	if err := cr.Create(ctx, name, decl); err != nil {
		return err
	}
	e.log.Info("created a missing target table from the changelog's declaration", "table", name.String(),
		"from", decl.From, "pos", c.Pos.String(), "ddl", strings.Join(stmts, "; "))
	return nil
}
