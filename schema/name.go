package schema

// Name names one target table by its parts. It is carried as two strings
// from routing to the dialect's catalog query and statements, and never
// joined into one dotted string that is split again: a table name may
// hold a dot, and splitting it would let that name choose a namespace.
type Name struct {
	// Namespace is the database (MySQL), schema (PostgreSQL) or attached
	// database (SQLite) holding the table; "" is the connection's own
	// (the URL's database, the search_path's first schema, main).
	Namespace string
	// Name is the table's name: one identifier, whatever it holds.
	Name string
}

// String returns "namespace.name", or "name" without a namespace, for
// messages only: it cannot be read back when a part holds a dot.
func (n Name) String() string {
	if n.Namespace == "" {
		return n.Name
	}
	return n.Namespace + "." + n.Name
}

// The tables txsink keeps in every target, beside the data.
const (
	// ProgressTable holds each pipeline's positions.
	ProgressTable = "txsink_progress"
	// DeadLetterTable holds the records quarantined under bad-input:
	// dead-letter.
	DeadLetterTable = "txsink_dead_letters"
)
