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
	"github.com/txsink/txsink/format"
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
	typed := TypedFormat(e.cfg)
	if typed != nil {
		errs = append(errs, typed)
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
			// Created from its declaration when its first change comes,
			// unless nothing can declare it.
			if cerr := Creatable(e.cfg, tc, name); cerr != nil && typed == nil {
				errs = append(errs, &TableError{Index: i, Source: tc.Source, Err: cerr})
			}
			continue
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
	if t, ok := e.tables.Get(c.Table); ok {
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
	e.tables.Put(c.Table, t)
	e.narrowBefore(c.Table, t)
	return t, nil
}

// narrowKnown makes dec the session's decoder and, when it can read an
// update's before image for the key alone (format.BeforeNarrower), tells
// it the key of every table known before any change is read: those
// resolved already, and those of the tables entries whose route is known
// (route.Known), resolved now as CheckTables resolves them (after a start
// again that forgot them: an altered table). A table first known from its
// changes is told when it is (tableFor); until then its before images are
// read whole. An entry that does not resolve is left to its first change,
// which reports why.
func (e *Engine) narrowKnown(ctx context.Context, dec format.Decoder) {
	e.narrower, _ = dec.(format.BeforeNarrower)
	if e.narrower == nil {
		return
	}
	e.tables.All(e.narrowBefore)
	for i := range e.cfg.Tables {
		tc := &e.cfg.Tables[i]
		if !route.Known(tc) {
			continue
		}
		// A source pattern with a wildcard reads as a table no change
		// names: telling it is harmless.
		src, name, err := route.Entry(tc)
		if err != nil {
			continue
		}
		if t, err := e.resolve(ctx, tc, name, nil); err == nil {
			e.narrowBefore(src, t)
		}
	}
}

// narrowBefore tells the session's decoder that of an update of source
// table src only the before image's key columns are read: by them alone
// the buffer tells whether the update moved the row (reduce's movedFrom).
// An update's old key is deleted at the after image's version, so the
// version column is not among them; an append-only table takes no
// updates.
func (e *Engine) narrowBefore(src changelog.Table, t *reduce.Table) {
	if e.narrower != nil && !t.AppendOnly && len(t.Key) > 0 {
		e.narrower.NarrowBefore(src, t.Key)
	}
}
