package sink

import (
	"context"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/schema/coltype"
)

// Widening is what widening one column takes (schema: {evolve: widen}),
// or why it is never done.
type Widening struct {
	// Column is the column; From is its type on the target, To the type
	// the record declares, for messages.
	Column, From, To string
	// Statements are the DDL that widens it, in order; none where the
	// target changes no DDL for it (SQLite, whose declared types are
	// affinities: see docs/schema.md). When Refused is set, they are
	// what to run by hand.
	Statements []string
	// Refused, when not "", says why the change is not a safe widening
	// (a narrower type, another type, another scale): txsink never makes
	// it.
	Refused string
	// Target is the column as the target describes it once widened.
	Target schema.Column
}

// Widener is a Sink that widens a column in place when the source
// declares it wider (schema: {evolve: widen}): a longer VARCHAR, CHAR or
// VARBINARY, a DECIMAL with more digits and the same scale, a wider
// integer, more fractional-second digits. Nothing else is ever changed.
type Widener interface {
	// PlanWiden returns what it takes to give column cur of table name
	// the type decl declares, running nothing: nil when decl is not wider
	// than cur (nothing to widen), a Widening with Refused set when the
	// change is not a safe widening. An error is the catalog's.
	PlanWiden(ctx context.Context, name schema.Name, cur schema.Column, decl coltype.Column) (*Widening, error)
	// Widen makes w, a Widening PlanWiden returned without Refused. DDL
	// of its own, committed before it returns; a column found as wide
	// already (another instance widened it) is left as it is.
	Widen(ctx context.Context, name schema.Name, w *Widening) error
}
