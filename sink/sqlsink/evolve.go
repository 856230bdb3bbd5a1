package sqlsink

// Adding a column the source added inside the unit that needs it, where
// the server's DDL is transactional (sink.UnitEvolver): the plan, the
// ALTER in the unit's transaction, and the shape versions that let the
// units after it go on with the table as planned.

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/schema/coltype"
	"github.com/txsink/txsink/sink"
)

var _ sink.UnitEvolver = (*DB)(nil)

// plannedShape is what DB knows of a table PlanColumns described: the
// shape version the target table has while it is the planned table
// (before the unit that adds the columns commits: the version it had
// then; after: the version that unit left), so a planned table is not
// taken for one a DBA altered.
type plannedShape struct {
	version   string
	committed bool
}

// plannedKey keys DB.planned: a table and the version PlanColumns gave it.
func plannedKey(tbl *schema.Table) string { return tbl.String() + "\x00" + tbl.Version }

// EvolvesInUnit reports whether the dialect's DDL is transactional
// (TransactionalDDL): then a column the source adds is added in the
// unit's transaction (commit.Batch.AddColumns), else by AddColumn.
func (t *DB) EvolvesInUnit() bool {
	td, ok := t.dialect.(TransactionalDDL)
	return ok && td.TransactionalDDL()
}

// PlanColumns returns table name as it is once cols are added
// (sink.UnitEvolver): the columns are added in a transaction that is
// rolled back after the table is described in it, so the description is
// the server's own, and nothing is written. Its Version is the one read
// in that transaction; DB remembers it, and the units that carry it take
// the table for unaltered while it is as planned.
func (t *DB) PlanColumns(ctx context.Context, name schema.Name, cols []coltype.Column) (*schema.Table, error) {
	if !t.EvolvesInUnit() {
		return nil, &sink.Error{Op: "add column", Table: name.String(), Err: fmt.Errorf("the %s target's DDL is not transactional", t.dialect.Name()),
			Hint: "this is a bug: txsink adds columns to it in a step of its own"}
	}
	var base string
	v, versioned := t.dialect.(Versioner)
	if versioned {
		var err error
		if base, err = v.ShapeVersion(ctx, t.db, name); err != nil {
			return nil, t.wrap("describe", name.String(), "", err)
		}
	}
	tx, err := t.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, t.wrap("begin", name.String(), "", err)
	}
	// Rolled back: the plan writes nothing.
	defer func() { _ = tx.Rollback() }()
	if err := t.addColumnsOn(ctx, tx, name, cols); err != nil {
		return nil, err
	}
	tbl, err := t.DescribeOn(ctx, tx, name)
	if err != nil {
		return nil, t.wrap("describe", name.String(), "", err)
	}
	if versioned {
		if tbl.Version, err = v.ShapeVersion(ctx, tx, name); err != nil {
			return nil, t.wrap("describe", name.String(), "", err)
		}
		t.plannedMu.Lock()
		if t.planned == nil {
			t.planned = map[string]plannedShape{}
		}
		if _, ok := t.planned[plannedKey(tbl)]; !ok {
			t.planned[plannedKey(tbl)] = plannedShape{version: base}
		}
		t.plannedMu.Unlock()
	}
	return tbl, nil
}

// addColumnsOn adds each of cols that table name lacks, through tx, the
// catalog read in tx: under the unit's locks on SQLite (the write lock,
// from BEGIN IMMEDIATE), and with ADD COLUMN IF NOT EXISTS on
// PostgreSQL, which waits for the lock of another transaction adding the
// same column and then finds it.
func (t *DB) addColumnsOn(ctx context.Context, tx *sql.Tx, name schema.Name, cols []coltype.Column) error {
	have, err := t.dialect.Describe(ctx, tx, name)
	if err != nil {
		return t.wrap("add column", name.String(), "", err)
	}
	for _, col := range cols {
		if _, ok := have.Column(col.Name); ok {
			continue
		}
		stmt, err := t.addColumnStatement(name, col)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return t.wrap("add column", name.String(), "", fmt.Errorf("column %s: %w", col.Name, err))
		}
	}
	return nil
}

// addUnitColumns adds, in the unit's transaction and before its rows, the
// columns u's batches carry (commit.Batch.AddColumns), and returns the
// shape versions the tables have in tx afterwards, by plannedKey, for
// checkShapes and, once tx commits, for notePlanned. A batch whose planned
// table a committed unit made already is left to checkShapes; any other
// is described in tx after the ALTER and must be the planned table, else
// the unit fails with sink.ErrShapeChanged (the table was altered since
// the plan: txsink plans again).
func (t *DB) addUnitColumns(ctx context.Context, tx *sql.Tx, u *commit.Unit) (map[string]string, error) {
	var now map[string]string
	v, versioned := t.dialect.(Versioner)
	for _, b := range u.Batches {
		if len(b.AddColumns) == 0 {
			continue
		}
		if p, ok := t.plannedShape(b.Table); ok && p.committed {
			continue
		}
		name := schema.Name{Namespace: b.Table.Namespace, Name: b.Table.Name}
		if err := t.addColumnsOn(ctx, tx, name, b.AddColumns); err != nil {
			return nil, err
		}
		got, err := t.DescribeOn(ctx, tx, name)
		if err != nil {
			return nil, t.wrap("describe", name.String(), "", err)
		}
		if !sameShape(got, b.Table) {
			return nil, &sink.Error{Op: "add column", Table: b.Table.String(), Err: fmt.Errorf("%w (after the columns were added it is not the table planned)", sink.ErrShapeChanged),
				Hint: "nothing of this unit was written; txsink reads the definition again and converts the changes anew"}
		}
		if !versioned || b.Table.Version == "" {
			continue
		}
		ver, err := v.ShapeVersion(ctx, tx, name)
		if err != nil {
			return nil, t.wrap("check the definition of", name.String(), "", err)
		}
		if now == nil {
			now = map[string]string{}
		}
		now[plannedKey(b.Table)] = ver
	}
	return now, nil
}

// sameShape reports whether a and b describe the same table, their
// versions aside.
func sameShape(a, b *schema.Table) bool {
	return a.String() == b.String() && reflect.DeepEqual(a.Columns, b.Columns) && reflect.DeepEqual(a.PrimaryKey, b.PrimaryKey) &&
		reflect.DeepEqual(a.ForeignKeys, b.ForeignKeys) && reflect.DeepEqual(a.UniqueKeys, b.UniqueKeys)
}

// plannedShape returns what DB knows of tbl, when PlanColumns made it.
func (t *DB) plannedShape(tbl *schema.Table) (plannedShape, bool) {
	t.plannedMu.Lock()
	defer t.plannedMu.Unlock()
	p, ok := t.planned[plannedKey(tbl)]
	return p, ok
}

// notePlanned records the versions a committed unit left its planned
// tables with.
func (t *DB) notePlanned(now map[string]string) {
	if len(now) == 0 {
		return
	}
	t.plannedMu.Lock()
	defer t.plannedMu.Unlock()
	for k, v := range now {
		t.planned[k] = plannedShape{version: v, committed: true}
	}
}

// expectedVersion is the shape version tbl's target table has while it is
// the shape tbl describes: tbl.Version, unless PlanColumns made tbl, whose
// version is that of a transaction rolled back: then the version the
// table had before (the unit that adds the columns is not committed) or
// the one that unit left. now holds the versions of the unit in flight
// (addUnitColumns).
func (t *DB) expectedVersion(tbl *schema.Table, now map[string]string) string {
	if v, ok := now[plannedKey(tbl)]; ok {
		return v
	}
	if p, ok := t.plannedShape(tbl); ok {
		return p.version
	}
	return tbl.Version
}
