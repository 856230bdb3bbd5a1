package sqlsink

import (
	"context"
	"database/sql"

	"github.com/txsink/txsink/schema"
)

// Loader is implemented by dialects that have a bulk-load path faster than
// multi-row statements for large groups of rows: LOAD DATA LOCAL INFILE on
// MariaDB and MySQL, COPY on PostgreSQL. Apply offers it every group of
// rows to upsert or insert before the array and multi-row statements; the
// dialect takes the group or declines it, and a declined group is written
// as before.
//
// A Load runs inside the unit's transaction, so what it writes commits or
// rolls back with the rest of the unit and with the progress row: the
// exactly-once guarantee does not depend on the path. A Load that fails
// for good is diagnosed like a failed statement: after the rollback its
// rows are replayed one by one with the single-row statements, and the
// error names the row the server refuses.
type Loader interface {
	// Load writes req.Rows into req.Table within tx and reports whether it
	// did; false (with a nil error) declines the group, having written
	// nothing. conn is the connection tx runs on, for drivers whose bulk
	// path is reached through sql.Conn.Raw.
	Load(ctx context.Context, conn *sql.Conn, tx *sql.Tx, req *LoadRequest) (bool, error)
}

// LoadRequest is one group of rows offered to a Loader.
type LoadRequest struct {
	// Table is the target table.
	Table *schema.Table
	// Columns are the columns each row holds, in row order.
	Columns []*schema.Column
	// Rows are the converted values (as Dialect.Bind receives them), one
	// slice per row, in Columns order. Keys are distinct within a request.
	Rows [][]any
	// Upsert is true when a row whose key exists must replace the
	// existing row's Columns (the dialect's Upsert); false for a plain
	// insert (append-only tables, the dialect's Insert).
	Upsert bool
}

// execLoad offers w to the dialect's Loader. It reports false, having run
// nothing, when the dialect has none or declines w.
func (t *DB) execLoad(ctx context.Context, conn *sql.Conn, tx *sql.Tx, w *work) (bool, *failure, error) {
	ld, ok := t.dialect.(Loader)
	if !ok || conn == nil || (w.kind != kindUpsert && w.kind != kindInsert) {
		return false, nil, nil
	}
	req := &LoadRequest{Table: w.table, Columns: w.cols, Rows: w.tuples, Upsert: w.kind == kindUpsert}
	done, err := ld.Load(ctx, conn, tx, req)
	if err != nil {
		return true, &failure{w: w, start: 0, end: len(w.tuples)}, t.wrap(w.op, w.table.String(), w.key(0), err)
	}
	return done, nil, nil
}
