package sqlite

import (
	"fmt"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink/sqlsink"
)

var _ sqlsink.DeclaredTypes = Dialect{}

// Widens reports whether SQLite keeps every value of to in column cur
// (sqlsink.DeclaredTypes): its declared types are affinities, so a
// widening changes no DDL (SQLite has no ALTER COLUMN) and txsink holds
// the column to the wider type. Text, blobs and integers have no bound
// txsink holds them to (SQLite keeps any length, INTEGER is 64 bits);
// date-times are text, any fraction; a decimal is REAL under NUMERIC
// affinity, which keeps sqliteDigits significant digits, so a wider one
// is refused.
func (Dialect) Widens(cur, to schema.Column) string {
	if to.Class == schema.Decimal && to.Precision > sqliteDigits {
		return fmt.Sprintf("SQLite keeps %d significant digits in a %s column (NUMERIC affinity stores REAL); to keep %d, "+
			"make the table again with the column declared TEXT (SQLite has no ALTER COLUMN: see https://sqlite.org/lang_altertable.html#otheralter)",
			sqliteDigits, cur.SQLType, to.Precision)
	}
	return ""
}
