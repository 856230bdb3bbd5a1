package engine

// Tables: each change's source table routed (package route) to its
// target table, described once and remembered, and the tables entries
// checked against the target at start.

import (
	"context"
	"errors"
	"fmt"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/route"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
)

// CheckTables resolves every tables entry without wildcards against the
// target, returning all the problems it finds at once: each a
// *TableError, joined (errors.Join).
func (e *Engine) CheckTables(ctx context.Context) error {
	var errs []error
	if err := TypedFormat(e.cfg); err != nil {
		errs = append(errs, err)
	}
	for i := range e.cfg.Tables {
		tc := &e.cfg.Tables[i]
		if msg := e.cfg.HistoryRefused(tc); msg != "" {
			errs = append(errs, &TableError{Index: i, Source: tc.Source, Err: errors.New(msg)})
			continue
		}
		if !route.Known(tc) {
			continue // resolved when the first change of a matching table comes
		}
		_, name, err := route.Entry(tc)
		if err == nil {
			_, err = e.resolve(ctx, tc, name, nil)
		}
		var missing *sink.MissingTableError
		if e.cfg.CreatesTables() && errors.As(err, &missing) {
			continue // created from the declaration of its first change
		}
		if err != nil {
			errs = append(errs, &TableError{Index: i, Source: tc.Source, Err: err})
		}
	}
	return errors.Join(errs...)
}

// TableError is a tables entry New refuses, and with it the pipeline's
// start: its target table is missing or one of txsink's own, or its key
// disagrees with the target's. "txsink check" reports each as an error.
type TableError struct {
	// Index is the entry's place in Config.Tables, Source its pattern.
	Index  int
	Source string
	// Err says what is wrong.
	Err error
}

// Error renders "tables[0] (shop.orders): ...".
func (e *TableError) Error() string {
	return fmt.Sprintf("tables[%d] (%s): %v", e.Index, e.Source, e.Err)
}

// Unwrap returns Err.
func (e *TableError) Unwrap() error { return e.Err }

// Kind reports errkind.Permanent: the pipeline does not start until the
// entry or its target table is corrected, whatever Err is.
func (e *TableError) Kind() errkind.Kind { return errkind.Permanent }

// Where names the entry's source pattern as the table.
func (e *TableError) Where() errkind.Where { return errkind.Where{Table: e.Source} }

// resolve returns the reduce.Table for target table name, routed to by
// entry tc (see package route), describing it the first time. With
// schema.create: missing a missing table is created from the declaration
// of change c (nil at start: the table stays missing).
func (e *Engine) resolve(ctx context.Context, tc *config.Table, name schema.Name, c *changelog.Change) (*reduce.Table, error) {
	if t, ok := e.byTarget[name]; ok {
		if t.History() != tc.IsHistory() {
			return nil, fmt.Errorf("target table %s is both applied by key and a history table (mode: history) of tables entries; give the history entry a target of its own", name)
		}
		return t, nil
	}
	st, err := e.describe(ctx, name)
	var missing *sink.MissingTableError
	if c != nil && e.cfg.CreatesTables() && errors.As(err, &missing) {
		if err := e.createTable(ctx, tc, name, c); err != nil {
			return nil, err
		}
		st, err = e.describe(ctx, name)
	}
	if err != nil {
		return nil, err
	}
	st, adds, err := e.planned(ctx, st)
	if err != nil {
		return nil, err
	}
	t, err := TableOf(st, tc)
	if err != nil {
		return nil, err
	}
	t.AddColumns = adds
	e.byTarget[name] = t
	return t, nil
}

// TableOf makes the reduce.Table of target table st for tables entry tc:
// its key, and its apply rules (version-column, delete). It refuses what
// a run refuses, so txsink check calls it too.
func TableOf(st *schema.Table, tc *config.Table) (*reduce.Table, error) {
	if tc.IsHistory() {
		return reduce.NewHistoryTable(st)
	}
	t, err := reduce.NewTable(st, tc.PrimaryKey, tc.AppendOnly)
	if err != nil {
		return nil, err
	}
	soft, ignore := tc.DeleteRule()
	if err := t.SetRules(commit.Rules{Version: tc.VersionColumn, SoftDelete: soft}, ignore); err != nil {
		return nil, err
	}
	return t, nil
}

func (e *Engine) tableFor(ctx context.Context, c *changelog.Change) (*reduce.Table, error) {
	if t, ok := e.tables[c.Table]; ok {
		return t, nil
	}
	if e.unknown[c.Table] {
		return nil, nil
	}
	rt, err := e.router.Route(c.Table)
	if err != nil {
		// Bad input, not a broken target: the change is refused at its
		// position (or dead-lettered) and the pipeline may go on past
		// it.
		var re *route.Error
		if !errors.As(err, &re) || re.Conflict {
			return nil, fmt.Errorf("%s: table %s: %w", c.Pos, c.Table, err)
		}
		return nil, &reduce.Error{Pos: c.Pos, Table: re.Table, Reason: re.Reason, Hint: re.Hint, Err: err}
	}
	if rt.Skipped() {
		e.unknown[c.Table] = true
		e.log.Info("skipping changes of a table no tables entry matches", "table", c.Table.String(), "pos", c.Pos.String())
		return nil, nil
	}
	var main *reduce.Table
	if rt.Entry != nil {
		if main, err = e.resolve(ctx, rt.Entry, rt.Target, c); err != nil {
			return nil, fmt.Errorf("%s: table %s: %w", c.Pos, c.Table, err)
		}
	}
	history := make([]*reduce.Table, len(rt.History))
	for i, h := range rt.History {
		if history[i], err = e.resolve(ctx, h.Entry, h.Target, c); err != nil {
			return nil, fmt.Errorf("%s: table %s: history table %s: %w", c.Pos, c.Table, h.Target, err)
		}
	}
	t := reduce.Fan(main, history...)
	e.tables[c.Table] = t
	return t, nil
}
