package schema

// UniqueKey is a UNIQUE index or constraint of a table besides its primary
// key, on plain columns (an index on expressions or with a WHERE clause is
// not one). Two rows of a commit may exchange its values; package sqlsink
// frees the values the commit's rows take before it writes them.
type UniqueKey struct {
	// Name is the index's name, for messages.
	Name string
	// Columns are the indexed columns, in index order.
	Columns []string
}
