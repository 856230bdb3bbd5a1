// Package errkind is txsink's one error vocabulary: what a failure asks of
// the pipeline (its Kind) and where it is (its Where), found on any error in
// a wrapped chain through two small interfaces, in the manner of pgconn's
// SafeToRetry.
//
// Each package keeps its own error type, with the fields its messages need
// (reduce.Error, format.Error, txn.Error, the target's errors, ...); each
// type says what it is by implementing Classifier and, when it names a
// place, Locator. The engine, the metrics and txsink check classify only
// through Of and WhereOf, never by an error's concrete type, so a new
// source, format or target is classified correctly by implementing two
// methods.
//
// errkind imports only changelog, so every package may import it.
package errkind

import (
	"errors"

	"github.com/txsink/txsink/changelog"
)

// Kind is what a failure asks of the pipeline.
type Kind uint8

const (
	// Unknown is an error that does not classify itself. The engine treats
	// it as Permanent: it stops and reports it.
	Unknown Kind = iota
	// BadInput is a failure of the input: a record that cannot be decoded,
	// a value its column cannot hold, a table the configuration does not
	// route, a row the target refuses for its own values. Retrying the same
	// input gives the same error; under bad-input: dead-letter the change
	// (or its source transaction) is quarantined and the rest is applied.
	BadInput
	// Transient is a failure that retrying the same work may cure: a
	// deadlock, a lost connection, a server restarting. Nothing of the
	// failed work was committed.
	Transient
	// Permanent is a failure neither of the input nor of the moment: the
	// configuration, the target's shape, a fenced instance. The pipeline
	// stops. (A transient failure that persisted through every retry stops
	// it too, but stays Transient: retrying later may succeed, and the
	// target's error says the engine gave up.)
	Permanent
)

// String returns "bad input", "transient", "permanent" or "unknown".
func (k Kind) String() string {
	switch k {
	case BadInput:
		return "bad input"
	case Transient:
		return "transient"
	case Permanent:
		return "permanent"
	}
	return "unknown"
}

// Classifier is implemented by an error that knows its Kind.
type Classifier interface {
	// Kind says what the failure asks of the pipeline. It must not depend
	// on the errors it wraps: Of finds the outermost classifier.
	Kind() Kind
}

// Of returns the Kind of the first error in err's tree (in the order of
// errors.As) that implements Classifier, or Unknown when none does or err
// is nil.
func Of(err error) Kind {
	var c Classifier
	if errors.As(err, &c) {
		return c.Kind()
	}
	return Unknown
}

// IsBadInput reports whether Of(err) is BadInput.
func IsBadInput(err error) bool { return Of(err) == BadInput }

// IsTransient reports whether Of(err) is Transient.
func IsTransient(err error) bool { return Of(err) == Transient }

// Where is the place a failure names. A zero field is not known.
type Where struct {
	// Pos is the source position of the record or change at fault.
	Pos changelog.Position
	// Table is the table, as the message names it (the target table, or
	// the source's "namespace.name" when no target table is known yet).
	Table string
	// Key is the row's key, rendered.
	Key string
	// Column is the column at fault.
	Column string
}

// Locator is implemented by an error that names where it is.
type Locator interface {
	// Where returns the place the error names.
	Where() Where
}

// WhereOf returns the place named by the first error in err's tree that
// implements Locator, and whether there is one.
func WhereOf(err error) (Where, bool) {
	var l Locator
	if errors.As(err, &l) {
		return l.Where(), true
	}
	return Where{}, false
}
