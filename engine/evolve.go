package engine

// Adding a column the source adds (schema: {evolve: add-columns}): the
// columns a change carries that its target table lacks are added from the
// change's declaration, and the pipeline starts again from its last
// commit with the table's new shape: what it had buffered was converted
// for the old one.
//
// Where the target's DDL is transactional (sink.UnitEvolver: PostgreSQL,
// SQLite) nothing is run then: the start again describes the table as
// it will be (PlanColumns), and every unit of the table carries the
// columns (commit.Batch.AddColumns), which the first one adds in its own
// transaction before its rows: the column and those rows commit
// together or not at all, and the units after it go on with the table
// as planned, with no start again. Elsewhere (MySQL, MariaDB: DDL
// commits implicitly) the ALTER runs in a step of its own, idempotent,
// so a crash between it and the unit leaves a column the next run finds.

import (
	"context"
	"fmt"
	"strings"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/schema/coltype"
	"github.com/txsink/txsink/sink"
)

// addColumns adds to t's target table every column change c carries that
// the table lacks, under schema.evolve: add-columns, and reports whether
// it added any. A column c's record does not declare is a *SchemaError.
func (e *Engine) addColumns(ctx context.Context, t *reduce.Table, c *changelog.Change) (bool, error) {
	if !e.cfg.AddsColumns() {
		return false, nil
	}
	var missing []string
	for _, img := range []changelog.Row{c.Before, c.After} {
		for _, n := range img.Names {
			if _, ok := t.Schema.Column(n); !ok && !contains(missing, n) {
				missing = append(missing, n)
			}
		}
	}
	if len(missing) == 0 {
		return false, nil
	}
	table := t.Schema.String()
	fail := func(reason, hint string) error {
		return &SchemaError{Table: table, Reason: fmt.Sprintf("%s: the change carries column %s, which the target table %s lacks, and schema.evolve: add-columns cannot add it: %s",
			c.Pos, strings.Join(missing, ", "), table, reason), Hint: hint}
	}
	ev, ok := e.target.(sink.Evolver)
	switch {
	case !ok:
		return false, fail("the target cannot add columns", "add the column yourself, then run again")
	case c.Types == nil:
		return false, fail("the record carries no column types", "have the producer send them (Debezium: value.converter.schemas.enable=true), or add the column yourself")
	case c.Types.Invalid != "":
		return false, fail(c.Types.From+" cannot be read: "+c.Types.Invalid, "add the column yourself, then run again")
	}
	cols := make([]coltype.Column, len(missing))
	for i, n := range missing {
		col, ok := c.Types.Column(n)
		if !ok {
			return false, fail(c.Types.From+" does not declare it", "add the column yourself, then run again")
		}
		cols[i] = *col
	}
	name := schema.Name{Namespace: t.Schema.Namespace, Name: t.Schema.Name}
	if ue, ok := ev.(sink.UnitEvolver); ok && ue.EvolvesInUnit() {
		for _, col := range cols {
			if !hasColumn(e.evolving[name], col.Name) {
				e.evolving[name] = append(e.evolving[name], col)
			}
			e.log.Info("a column the source added is to be added to the target table in the transaction of the unit that needs it", "table", table,
				"column", col.Name, "type", col.Type.String(), "pos", c.Pos.String())
		}
		return true, nil
	}
	for _, col := range cols {
		if err := ev.AddColumn(ctx, name, col); err != nil {
			return false, err
		}
		e.log.Info("added a column the source added to the target table", "table", table, "column", col.Name, "type", col.Type.String(), "pos", c.Pos.String())
	}
	return true, nil
}

// planned returns st, a target table as described, as it will be
// once it has the columns the source added that addColumns planned to add
// in the unit's transaction, and those of them it lacks; st and nil when
// it has them all (a unit committed them), and the plan is dropped.
func (e *Engine) planned(ctx context.Context, st *schema.Table) (*schema.Table, []coltype.Column, error) {
	// Keyed by the name the catalog gives, as addColumns keys it.
	name := schema.Name{Namespace: st.Namespace, Name: st.Name}
	var lacks []coltype.Column
	for _, col := range e.evolving[name] {
		if _, ok := st.Column(col.Name); !ok {
			lacks = append(lacks, col)
		}
	}
	if len(lacks) == 0 {
		delete(e.evolving, name)
		return st, nil, nil
	}
	ue, ok := e.target.(sink.UnitEvolver)
	if !ok {
		return st, nil, nil
	}
	planned, err := ue.PlanColumns(ctx, name, lacks)
	if err != nil {
		return nil, nil, err
	}
	return planned, lacks, nil
}

func hasColumn(cols []coltype.Column, n string) bool {
	for _, c := range cols {
		if c.Name == n {
			return true
		}
	}
	return false
}

func contains(names []string, n string) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}
