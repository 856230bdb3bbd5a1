// Package route decides where a change goes: from the source table a
// change names, through the first tables entry whose source pattern
// matches it, to the target table (schema.Name) that entry routes it to,
// or nowhere (skipped, under skip-unknown-tables).
//
// A Router is pure: it reads the configuration and the table's name, and
// nothing else. txsink run (package engine) and txsink check (package
// diagnose) route through it alike, so check reports what a run does.
// What a route refuses is an *Error, bad input (errkind.BadInput): the
// name came from the changelog, and the same name is refused again.
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
	// Entry is the tables entry that matches the table (an element of
	// Config.Tables); nil when the table's changes are skipped.
	Entry *config.Table
	// Target is the target table the entry routes the table to.
	Target schema.Name
}

// Skipped reports whether no tables entry matches the table and
// skip-unknown-tables skips its changes.
func (r Route) Skipped() bool { return r.Entry == nil }

// Route returns where changes of src go. A table no entry matches is
// skipped under skip-unknown-tables, else refused; a table whose entry
// cannot route it (config.Table.Resolve: a name that is not one plain
// identifier, one of txsink's own tables) is refused. A refusal is an
// *Error.
func (r *Router) Route(src changelog.Table) (Route, error) {
	tc, ok := r.cfg.Match(src)
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
	return Route{Entry: tc, Target: name}, nil
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

// Error is a source table the Router refuses to route. It is bad input:
// the engine refuses the change at its position (or dead-letters it under
// bad-input: dead-letter), and check reports it.
type Error struct {
	// Source is the source table as the changelog named it.
	Source changelog.Table
	// Table is the source table as messages name it.
	Table string
	// Unknown says no tables entry matches the table; otherwise its
	// entry's route is refused, and Err is the *config.RouteError.
	Unknown bool
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

// Kind reports errkind.BadInput.
func (e *Error) Kind() errkind.Kind { return errkind.BadInput }

// Where names the source table.
func (e *Error) Where() errkind.Where { return errkind.Where{Table: e.Table} }
