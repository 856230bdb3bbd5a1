package benchrun

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
)

// tables are the workload tables the bench writes, each created with a
// prefix of the run's own in the target (see prefixes), so it never
// touches tables of the user's, nor those of another bench running against
// the same database.
var tables = []benchTable{
	{"orders", "id"},
	{"order_items", "order_id, line_no"},
}

// linkedTables are the tables of --foreign-keys: the orders and items
// with a third level under them (workload.LinkedSchema), parents first.
var linkedTables = append(slices.Clip(tables), benchTable{"item_notes", "order_id, line_no, note_no"})

// childrenFirst is linkedTables in the order they can be dropped in.
var childrenFirst = func() []benchTable {
	ts := slices.Clone(linkedTables)
	slices.Reverse(ts)
	return ts
}()

// benchTable is one table of the bench: its name without the run's
// prefix, and the order its rows are dumped in.
type benchTable struct{ name, order string }

// tablesOf returns the tables o's bench writes, parents first.
func tablesOf(o *Options) []benchTable {
	if o.ForeignKeys != "" {
		return linkedTables
	}
	return tables
}

// emptyTables deletes every row of the tables ts of each prefix (tables
// without foreign keys: a referenced table cannot be truncated).
func emptyTables(ctx context.Context, db *sql.DB, dialect string, ts []benchTable, prefixes ...string) error {
	stmt := "TRUNCATE TABLE "
	if dialect == "sqlite" {
		stmt = "DELETE FROM "
	}
	return onTables(ctx, db, "empty", stmt, ts, prefixes)
}

// dropTables drops the bench's tables of each prefix, those that exist,
// the linked ones included, children first.
func dropTables(ctx context.Context, db *sql.DB, prefixes ...string) error {
	return onTables(ctx, db, "drop", "DROP TABLE IF EXISTS ", childrenFirst, prefixes)
}

// onTables runs stmt followed by the name of each table of ts of each
// prefix; what names the work in an error.
func onTables(ctx context.Context, db *sql.DB, what, stmt string, ts []benchTable, prefixes []string) error {
	for _, prefix := range prefixes {
		for _, t := range ts {
			if _, err := db.ExecContext(ctx, stmt+prefix+t.name); err != nil {
				return fmt.Errorf("%s bench table %s: %w", what, prefix+t.name, err)
			}
		}
	}
	return nil
}

// tableExists says whether the table name exists where an unqualified
// statement of db's session finds it.
func tableExists(ctx context.Context, db *sql.DB, dialect, name string) (bool, error) {
	var q string
	switch dialect {
	case "postgres":
		q = "SELECT COUNT(*) FROM pg_catalog.pg_class WHERE oid = to_regclass($1)"
	case "sqlite":
		q = "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
	default:
		q = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?"
	}
	var n int
	if err := db.QueryRowContext(ctx, q, name).Scan(&n); err != nil {
		return false, fmt.Errorf("look for table %s: %w", name, err)
	}
	return n > 0, nil
}

// dropIfEmpty drops table name if no row is left in it: a bench started
// beside this one keeps its progress (one that has not committed yet may
// still lose the table, and then fails its run, not silently).
func dropIfEmpty(ctx context.Context, db *sql.DB, name string) error {
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+name).Scan(&n); err != nil {
		return fmt.Errorf("count the rows of %s: %w", name, err)
	}
	if n > 0 {
		return nil
	}
	if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+name); err != nil {
		return fmt.Errorf("drop %s, which the bench created: %w", name, err)
	}
	return nil
}
