package sink

// MissingTableError is a target table Describe cannot find (the SQL sinks
// return it, so that check can say the fix once): it
// does not exist, or txsink's user cannot see it. txsink never creates a
// target table unless schema.create: missing says so (and then only from
// a changelog that declares its types), so the fix is the user's: create
// it, have txsink create it, or route to another.
type MissingTableError struct {
	// Table is the table as the target names it ("shop.orders", or
	// "orders" on SQLite).
	Table string
	// Invisible says the server cannot tell a missing table from one the
	// user lacks the privilege to see (MySQL/MariaDB, PostgreSQL).
	Invisible bool
}

// Error returns "table T does not exist (or the user cannot see it):
// create it first, or set schema.create: missing".
func (e *MissingTableError) Error() string {
	return e.Reason() + ": create it first, or set schema.create: missing to have txsink create it from the changelog's declaration"
}

// Reason is the error without its fix: "table T does not exist (or the user
// cannot see it)", for a report that says the fix apart.
func (e *MissingTableError) Reason() string {
	s := "table " + e.Table + " does not exist"
	if e.Invisible {
		s += " (or the user cannot see it)"
	}
	return s
}
