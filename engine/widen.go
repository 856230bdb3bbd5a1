package engine

// Widening a column the source widened (schema: {evolve: widen}): a
// value its target column refuses, of a change whose record declares
// the column wider, has the column widened in a step of its own, and the
// pipeline starts again from its last commit with the table's new shape.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
)

// widen widens the column of t that refusal re names when change c's
// record declares it wider, under schema.evolve: widen, and returns the
// target.ErrShapeChanged that starts the pipeline again (with re when
// the widening failed). Otherwise it returns nil, and re says more: without the option, that the
// record declares the column wider, the option and the statement; for a
// change that is no safe widening, the change and the statement to run
// by hand, in place of its own hint. re stays the refusal it was (bad
// input: bad-input: dead-letter sets the change aside).
func (e *Engine) widen(ctx context.Context, t *reduce.Table, c *changelog.Change, re *reduce.Error) error {
	w, ok := e.target.(sink.Widener)
	if !ok || c.Types == nil || c.Types.Invalid != "" {
		return nil
	}
	cur, ok := t.Schema.Column(re.Column)
	if !ok {
		return nil
	}
	decl, ok := c.Types.Column(re.Column)
	if !ok {
		return nil
	}
	name := schema.Name{Namespace: t.Schema.Namespace, Name: t.Schema.Name}
	plan, err := w.PlanWiden(ctx, name, *cur, *decl)
	switch {
	case err != nil:
		return errors.Join(re, err)
	case plan == nil:
		return nil
	}
	stmts := strings.Join(plan.Statements, "; ")
	switch {
	case plan.Refused != "":
		hint := fmt.Sprintf("the record declares column %s as %s where the target has %s: %s, which txsink never makes", plan.Column, plan.To, plan.From, plan.Refused)
		if stmts != "" {
			hint += "; to make it yourself, run " + stmts + ", then run txsink again"
		}
		re.Hint = hint
		return nil
	case !e.cfg.Widens():
		hint := fmt.Sprintf("the record declares column %s as %s, wider than the target's %s: set schema.evolve: [widen] to have txsink widen it", plan.Column, plan.To, plan.From)
		if stmts != "" {
			hint += " (" + stmts + "), or run that yourself, then run txsink again"
		}
		re.Hint = hint
		return nil
	}
	// Every column the record declares wider is widened now, not only
	// the one refused: each widening starts the pipeline again, and a
	// unit whose columns all widened at once would otherwise need a
	// start again per column.
	plans := []*sink.Widening{plan}
	for _, col := range c.Types.Columns {
		other, ok := t.Schema.Column(col.Name)
		if !ok || other.Name == cur.Name {
			continue
		}
		p, err := w.PlanWiden(ctx, name, *other, col)
		if err != nil {
			return errors.Join(re, err)
		}
		if p != nil && p.Refused == "" {
			plans = append(plans, p)
		}
	}
	var cols []string
	for _, p := range plans {
		if err := w.Widen(ctx, name, p); err != nil {
			return errors.Join(re, err)
		}
		cols = append(cols, p.Column)
		e.log.Info("widened a column the source widened on the target table", "table", name.String(), "column", p.Column,
			"from", p.From, "to", p.To, "pos", c.Pos.String(), "ddl", strings.Join(p.Statements, "; "))
	}
	return &sink.Error{Op: "convert", Table: name.String(), Err: fmt.Errorf("%w: column %s widened (schema.evolve: widen)", sink.ErrShapeChanged, strings.Join(cols, ", ")),
		Hint: "txsink reads the definition again and converts the change anew"}
}
