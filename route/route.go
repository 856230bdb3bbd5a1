// Package route decides where a change goes: from the source table a
// change names, through the first tables entry whose source pattern
// matches it (history entries left out), to the target table
// (schema.Name) that entry routes it to, and to the target of every
// mode: history entry that matches it, in the tables list's order; or
// nowhere (skipped, under skip-unknown-tables). The order is the list's,
// so a route depends on the configuration alone, never on the changes.
//
// A Router is pure: it reads the configuration and the table's name, and
// nothing else. txsink run (package engine) and txsink check (package
// diagnose) route through it alike, so check reports what a run does.
// What a route refuses is an *Error, bad input (errkind.BadInput): the
// name came from the changelog, and the same name is refused again. A
// table the entries route to one target table twice is a Conflict, a
// permanent error: the configuration is wrong.
//
// route imports only changelog, config, errkind and schema.
package route

import (
	"fmt"
	"strings"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/schema"
)

// Router routes source tables by one configuration's tables entries. It
// keeps nothing between calls; callers that route every change remember
// each table's Route.
type Router struct{ cfg *config.Config }

// New returns the Router of cfg's tables entries and skip-unknown-tables.
// cfg must not change while the Router is used.
func New(cfg *config.Config) *Router { return &Router{cfg: cfg} }

// Route is where a source table's changes go.
type Route struct {
	// Entry is the tables entry, not a history entry, that matches the
	// table (an element of Config.Tables); nil when none does.
	Entry *config.Table
	// Target is the target table the entry routes the table to.
	Target schema.Name
	// History lists the history entries (config.Table.IsHistory) that
	// match the table, in the tables list's order, each with its
	// target: every change of the table is a row of each.
	History []Hop
}

// Hop is one history entry of a Route and the target table it routes
// the source table to.
type Hop struct {
	Entry  *config.Table
	Target schema.Name
}

// Skipped reports whether no tables entry matches the table and
// skip-unknown-tables skips its changes.
func (r Route) Skipped() bool { return r.Entry == nil && len(r.History) == 0 }

// Route returns where changes of src go. A table no entry matches is
// skipped under skip-unknown-tables, else refused; a table whose entry
// cannot route it (config.Table.Resolve: a name that is not one plain
// identifier, one of txsink's own tables) is refused. A refusal is an
// *Error.
func (r *Router) Route(src changelog.Table) (Route, error) {
	tc, ok := r.cfg.Match(src)
	var hist []Hop
	for _, h := range r.cfg.History(src) {
		name, err := resolve(h, src)
		if err != nil {
			return Route{}, err
		}
		if o := sameTarget(hist, name); o != nil {
			return Route{}, twice(src, fmt.Sprintf("two history entries (%q and %q) route the table to %s", o.Entry.Source, h.Source, name),
				"give one of them another target, or narrow its source pattern")
		}
		hist = append(hist, Hop{Entry: h, Target: name})
	}
	if !ok && len(hist) > 0 {
		return Route{History: hist}, nil
	}
	if !ok {
		if r.cfg.SkipUnknownTables {
			return Route{}, nil
		}
		return Route{}, &Error{Source: src, Table: src.String(), Unknown: true,
			Reason: "unknown table: no tables entry matches it",
			Hint:   fmt.Sprintf("add a tables entry with source: %s (wildcards allowed), or set skip-unknown-tables: true to skip such changes", src)}
	}
	name, err := resolve(tc, src)
	if err != nil {
		return Route{}, err
	}
	if h := sameTarget(hist, name); h != nil {
		return Route{}, twice(src, fmt.Sprintf("history entry %q routes the table to %s, which entry %q applies it to by key", h.Entry.Source, name, tc.Source),
			"give the history entry a target of its own")
	}
	return Route{Entry: tc, Target: name, History: hist}, nil
}

// sameTarget returns the hop of hops whose target is name, or nil.
func sameTarget(hops []Hop, name schema.Name) *Hop {
	for i := range hops {
		if hops[i].Target == name {
			return &hops[i]
		}
	}
	return nil
}

// twice refuses a route that would write src's changes to one target
// table twice (what, naming the entries), saying what to do (hint).
func twice(src changelog.Table, what, hint string) *Error {
	return &Error{Source: src, Table: src.Printable(), Conflict: true, Reason: what + ", which would get each change twice", Hint: hint}
}

// Known reports whether entry tc's route is known before any change is
// read: it names one source table, or its target. An entry with a
// wildcard and no target routes each table it matches by the table's
// own name, known only from changes.
func Known(tc *config.Table) bool {
	return !strings.ContainsAny(tc.Source, "*?") || tc.Target != ""
}

// Entry resolves entry tc as a run does before it reads anything (see
// Known): its source pattern read as one table (SourceTable), and the
// target table it routes that table to, or the *Error refusing it.
func Entry(tc *config.Table) (changelog.Table, schema.Name, error) {
	src := SourceTable(tc.Source)
	name, err := resolve(tc, src)
	return src, name, err
}

// SourceTable reads "namespace.name" (split at its first dot) or "name"
// as the changelog names a table.
func SourceTable(s string) changelog.Table {
	ns, name, ok := strings.Cut(s, ".")
	if !ok {
		return changelog.Table{Name: s}
	}
	return changelog.Table{Namespace: ns, Name: name}
}

// resolve is tc.Resolve, its refusal an *Error.
func resolve(tc *config.Table, src changelog.Table) (schema.Name, error) {
	name, err := tc.Resolve(src)
	if err != nil {
		re, ok := err.(*config.RouteError)
		if !ok {
			return schema.Name{}, err
		}
		return schema.Name{}, &Error{Source: src, Table: src.Printable(), Reason: re.Reason, Hint: re.Hint, Err: err}
	}
	return name, nil
}

// Error is a source table the Router refuses to route. It is bad input
// (but for a Conflict): the engine refuses the change at its position (or
// dead-letters it under bad-input: dead-letter), and check reports it.
type Error struct {
	// Source is the source table as the changelog named it.
	Source changelog.Table
	// Table is the source table as messages name it.
	Table string
	// Unknown says no tables entry matches the table; otherwise its
	// entry's route is refused, and Err is the *config.RouteError.
	Unknown bool
	// Conflict says the tables entries route the table to one target
	// table twice (a history entry's target is another entry's): the
	// configuration is wrong, whichever change comes, so the error is
	// permanent, not bad input.
	Conflict bool
	// Reason says what is wrong, naming the refused name; Hint what to
	// do.
	Reason, Hint string
	Err          error
}

// Error returns the reason and the hint. It does not name the source
// table again: callers name it, with the record's position or the tables
// entry.
func (e *Error) Error() string { return e.Reason + "; " + e.Hint }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Kind reports errkind.BadInput, or errkind.Permanent for a Conflict.
func (e *Error) Kind() errkind.Kind {
	if e.Conflict {
		return errkind.Permanent
	}
	return errkind.BadInput
}

// Where names the source table.
func (e *Error) Where() errkind.Where { return errkind.Where{Table: e.Table} }
