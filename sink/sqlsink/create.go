package sqlsink

// Creating a target table from the source's declaration (schema: {create:
// missing}): the column list is the dialect's (TypeMapper), the statement
// and its key shared here.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/schema/coltype"
	"github.com/txsink/txsink/sink"
)

// TypeMapper is a Dialect that declares a column for a source type, so
// the target can create the tables a changelog declares (sink.Creator).
// Each dialect documents its mapping in docs/schema.md, and its tests
// round-trip a boundary value of every kind through the real server.
type TypeMapper interface {
	// ColumnType returns the type (and any CHECK) declaring col, whose
	// quoted name is quoted; key says col is in the primary key (MySQL
	// cannot key on TEXT). An error says why the dialect has no column
	// type for it, and what to do. CreateTable refuses an Unsupported
	// type and an enum without values before it asks.
	ColumnType(col coltype.Column, quoted string, key bool) (string, error)
	// TableOptions is what follows the column list ("" for nothing).
	TableOptions() string
}

// DB can create tables and add columns when its dialect maps types.
var (
	_ sink.Creator = (*DB)(nil)
	_ sink.Evolver = (*DB)(nil)
)

// CreateStatements returns the CREATE TABLE IF NOT EXISTS that makes
// table name as tbl declares it (sink.Creator), running nothing. Key
// columns are NOT NULL, and so are the columns the source declares
// required.
func (t *DB) CreateStatements(name schema.Name, tbl *coltype.Table) ([]string, error) {
	tm, ok := t.dialect.(TypeMapper)
	if !ok {
		return nil, &sink.Error{Op: "create table", Table: name.String(), Err: fmt.Errorf("the %s dialect cannot create tables", t.dialect.Name()),
			Hint: "create the table yourself"}
	}
	stmt, err := CreateTable(t.dialect, tm, name, tbl)
	if err != nil {
		return nil, &sink.Error{Op: "create table", Table: name.String(), Err: err,
			Hint: "create the table yourself, then run again"}
	}
	return []string{stmt}, nil
}

// Create runs CreateStatements (sink.Creator). IF NOT EXISTS makes it
// safe beside another instance creating the same table; the table is
// described afterwards, so one created differently is judged as any
// existing table is.
func (t *DB) Create(ctx context.Context, name schema.Name, tbl *coltype.Table) error {
	stmts, err := t.CreateStatements(name, tbl)
	if err != nil {
		return err
	}
	return t.createIfMissing(ctx, stmts, "create table", name.String())
}

// AddColumn adds col to table name, NULL-able (its existing rows have no
// value for it), unless the table has it already (sink.Evolver), in a
// step of its own. The catalog is read first, and again after a failure,
// which another instance adding the same column at once causes; the
// statement is ADD COLUMN IF NOT EXISTS where the server has it
// (ColumnAdder: MariaDB, PostgreSQL), so a crash between it and the unit
// that needs the column leaves a column the next run takes as added.
// MySQL 8 has no IF NOT EXISTS there: the catalog check is all it gets
// (untested here, where no MySQL server runs).
func (t *DB) AddColumn(ctx context.Context, name schema.Name, col coltype.Column) error {
	has := func() bool {
		tbl, err := t.dialect.Describe(ctx, t.db, name)
		if err != nil {
			return false
		}
		_, ok := tbl.Column(col.Name)
		return ok
	}
	if has() {
		return nil
	}
	stmt, err := t.addColumnStatement(name, col)
	if err != nil {
		return err
	}
	if _, err := t.db.ExecContext(ctx, stmt); err != nil && !has() {
		return t.wrap("add column", name.String(), "", err)
	}
	return nil
}

// ColumnAdder is a Dialect whose server has ALTER TABLE … ADD COLUMN IF
// NOT EXISTS (MariaDB, PostgreSQL; MySQL and SQLite have not).
type ColumnAdder interface {
	// AddsColumnIfNotExists reports whether the server has it.
	AddsColumnIfNotExists() bool
}

// TransactionalDDL is a Dialect whose ALTER TABLE is transactional
// (PostgreSQL, SQLite): a column the source adds is added inside the
// unit's own transaction (commit.Batch.AddColumns), so the column and
// the rows that need it commit together or not at all. On MySQL and
// MariaDB DDL commits implicitly, and AddColumn runs in a step of its
// own.
type TransactionalDDL interface {
	// TransactionalDDL reports whether DDL runs inside a transaction.
	TransactionalDDL() bool
}

// addColumnStatement is the ALTER TABLE that adds col to table name,
// NULL-able, with IF NOT EXISTS where the server has it.
func (t *DB) addColumnStatement(name schema.Name, col coltype.Column) (string, error) {
	tm, ok := t.dialect.(TypeMapper)
	if !ok {
		return "", &sink.Error{Op: "add column", Table: name.String(), Err: fmt.Errorf("the %s dialect cannot add columns", t.dialect.Name()),
			Hint: "add the column yourself"}
	}
	col.Nullable = true
	typ, err := columnType(t.dialect, tm, col, false)
	if err != nil {
		return "", &sink.Error{Op: "add column", Table: name.String(), Err: fmt.Errorf("column %s (%s): %w", col.Name, col.Type, err),
			Hint: "add the column yourself, then run again"}
	}
	add := " ADD COLUMN "
	if ca, ok := t.dialect.(ColumnAdder); ok && ca.AddsColumnIfNotExists() {
		add = " ADD COLUMN IF NOT EXISTS "
	}
	return "ALTER TABLE " + QuotedTable(t.dialect, &schema.Table{Namespace: name.Namespace, Name: name.Name}) +
		add + t.dialect.Quote(col.Name) + " " + typ, nil
}

// columnType declares col in d, refusing first what no dialect has a
// column for.
func columnType(d Dialect, tm TypeMapper, c coltype.Column, key bool) (string, error) {
	switch {
	case c.Type.Kind == coltype.Unsupported && c.Type.Why != "":
		return "", errors.New(c.Type.Why)
	case c.Type.Kind == coltype.Enum && len(c.Type.Values) == 0:
		return "", errors.New("the source names no values for the enum")
	}
	typ, err := tm.ColumnType(c, d.Quote(c.Name), key)
	if err != nil {
		return "", err
	}
	// The source default, when it declares one (a created or added
	// column's DEFAULT).
	def, err := defaultClause(d, c, typ)
	return typ + def, err
}

// CreateTable writes CREATE TABLE IF NOT EXISTS for tbl in d: one column
// per declared column in the source's order, NOT NULL for key columns
// and required ones, and the PRIMARY KEY.
func CreateTable(d Dialect, tm TypeMapper, name schema.Name, tbl *coltype.Table) (string, error) {
	if tbl.Invalid != "" {
		return "", fmt.Errorf("the declaration of the table in %s cannot be read: %s", tbl.From, tbl.Invalid)
	}
	if len(tbl.Columns) == 0 {
		return "", errors.New(tbl.From + " declares no columns")
	}
	var b strings.Builder
	b.WriteString("CREATE TABLE IF NOT EXISTS ")
	b.WriteString(QuotedTable(d, &schema.Table{Namespace: name.Namespace, Name: name.Name}))
	b.WriteString(" (")
	for i, c := range tbl.Columns {
		key := isKey(tbl.Key, c.Name)
		typ, err := columnType(d, tm, c, key)
		if err != nil {
			return "", fmt.Errorf("column %s (%s): %w", c.Name, c.Type, err)
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(d.Quote(c.Name))
		b.WriteByte(' ')
		b.WriteString(typ)
		if key || !c.Nullable {
			b.WriteString(" NOT NULL")
		}
	}
	if len(tbl.Key) > 0 {
		b.WriteString(", PRIMARY KEY (")
		for i, k := range tbl.Key {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(d.Quote(k))
		}
		b.WriteByte(')')
	}
	b.WriteByte(')')
	if opts := tm.TableOptions(); opts != "" {
		b.WriteByte(' ')
		b.WriteString(opts)
	}
	return b.String(), nil
}

func isKey(key []string, name string) bool {
	for _, k := range key {
		if k == name {
			return true
		}
	}
	return false
}

// NoColumnType is the error of a TypeMapper for a kind it has no
// column type for.
func NoColumnType(t coltype.Type) error {
	return fmt.Errorf("txsink has no column type for %s", t.Kind)
}

// QuoteLiteral quotes s as a SQL string literal, doubling its quotes
// (for ENUM values and CHECK lists).
func QuoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// EnumCheck returns "CHECK (quoted IN ('a', 'b'))", the constraint that
// keeps a text column to an enum's values on a server without ENUM.
func EnumCheck(quoted string, values []string) string {
	lits := make([]string, len(values))
	for i, v := range values {
		lits[i] = QuoteLiteral(v)
	}
	return "CHECK (" + quoted + " IN (" + strings.Join(lits, ", ") + "))"
}
