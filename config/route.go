package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/schema"
)

// RouteError is a route Resolve refuses: the target it would take is not
// one plain table of the target's own namespace, or is one of txsink's
// own tables. When the name came from the changelog (a wildcard entry
// without target) it is bad input, which the engine reports at the
// record, with its position, and dead-letters under bad-input:
// dead-letter.
type RouteError struct {
	// Source is the source table as the changelog named it.
	Source changelog.Table
	// Reason says what is wrong, naming the refused name.
	Reason string
	// Hint says what to do.
	Hint string
}

// Error returns the reason and the hint. It does not name the source
// table again: callers name it, with the record's position or the tables
// entry.
func (e *RouteError) Error() string { return e.Reason + "; " + e.Hint }

// Kind reports errkind.BadInput: the name came from the changelog (or
// the entry names a table changes never write), and the same name is
// refused again. An entry refused at start is reported by the engine as
// a refused entry (a permanent error) around it.
func (e *RouteError) Kind() errkind.Kind { return errkind.BadInput }

// Where names the source table, as Printable renders it.
func (e *RouteError) Where() errkind.Where { return errkind.Where{Table: e.Source.Printable()} }

// reservedTables is how messages name the tables schema.Reserved keeps.
const reservedTables = "txsink's own tables (" + schema.ProgressTable + "*, " + schema.DeadLetterTable + "*)"

// Resolve returns the target table for changes of src, or a *RouteError.
// With Target set it is the table Target names (split at its one dot, as
// Validate allows). Otherwise it is src's name as one identifier in the
// target's own database or schema — never split, so a source name can
// never choose another namespace — and a name that is not one plain
// identifier (schema.IdentProblem: a dot, a quote, a control character,
// ...) is refused rather than taken. Either way a name txsink keeps for
// its own tables (schema.Reserved) is refused, in any namespace.
func (tb *Table) Resolve(src changelog.Table) (schema.Name, error) {
	if tb.Target != "" {
		n := tb.targetName()
		if schema.Reserved(n.Name) {
			return schema.Name{}, &RouteError{Source: src,
				Reason: fmt.Sprintf("target %q is one of %s, which changes never write", tb.Target, reservedTables),
				Hint:   "route the table to a table of your own with target:"}
		}
		return n, nil
	}
	// What to do: an entry for this one table says where it goes; for a
	// fixed entry that is this entry's own target.
	route := fmt.Sprintf("route the table with an entry before this one (source: %s, target: <a table of your own>)", strconv.Quote(src.String()))
	if !hasWildcard(tb.Source) {
		route = "set target: on this entry to a table of your own"
	}
	if schema.Reserved(src.Name) {
		hint := route
		if hasWildcard(tb.Source) {
			hint = fmt.Sprintf("narrow the pattern %q, or %s", tb.Source, route)
		}
		return schema.Name{}, &RouteError{Source: src,
			Reason: fmt.Sprintf("the table's name %s is one of %s, which changes never write", strconv.Quote(src.Name), reservedTables),
			Hint:   hint}
	}
	if why := schema.IdentProblem(src.Name); why != "" {
		return schema.Name{}, &RouteError{Source: src,
			Reason: fmt.Sprintf("the table's name %s %s, and a target named after a source table must be one plain table "+
				"of the target's own database or schema", strconv.Quote(src.Name), why),
			Hint: route + ", or rename the source table"}
	}
	return schema.Name{Name: src.Name}, nil
}

// targetName reads Target: "schema.name" split at the first dot, or
// "name" in the target's own namespace.
func (tb *Table) targetName() schema.Name {
	if ns, name, dotted := strings.Cut(tb.Target, "."); dotted {
		return schema.Name{Namespace: ns, Name: name}
	}
	return schema.Name{Name: tb.Target}
}
