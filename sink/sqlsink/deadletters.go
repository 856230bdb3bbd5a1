package sqlsink

// The dead-letter table: created and widened at setup, written in the
// unit's transaction, listed by txsink dead-letters.

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
)

// DeadLetterMigrator is a Dialect whose earlier dead-letter table could
// not hold every dead letter (MySQL/MariaDB's VARCHAR(512) txn_id).
type DeadLetterMigrator interface {
	// MigrateDeadLetters brings an existing dead-letter table to the
	// current shape, keeping its rows; it does nothing to a current one.
	MigrateDeadLetters(ctx context.Context, db *sql.DB) error
}

// SetupDeadLetters creates the dead-letter table if it does not exist,
// and widens the columns of one an older txsink created.
func (t *DB) SetupDeadLetters(ctx context.Context) error {
	if err := t.createIfMissing(ctx, t.dialect.DeadLetterSchema(), "create dead-letter table", DeadLetterTable); err != nil {
		return err
	}
	if m, ok := t.dialect.(DeadLetterMigrator); ok {
		if err := m.MigrateDeadLetters(ctx, t.db); err != nil {
			e := t.wrap("widen the columns of", DeadLetterTable, "", err)
			if te, ok := e.(*sink.Error); ok && !te.Transient {
				te.Hint = "txsink needs ALTER on " + DeadLetterTable + " once, to store transaction ids of any length; grant it, or run the ALTER as its owner"
			}
			return e
		}
	}
	return nil
}

var deadLetterCols = []string{"pipeline", "source_partition", "position", "seq", "txn_id", "raw", "reason"}

// deadLetters writes the unit's quarantined transactions.
func (t *DB) deadLetters(ctx context.Context, tx *sql.Tx, u *commit.Unit) error {
	if len(u.DeadLetters) == 0 {
		return nil
	}
	var sb strings.Builder
	WriteInsert(&sb, t.dialect, &schema.Table{Name: DeadLetterTable}, deadLetterCols, len(u.DeadLetters))
	args := make([]any, 0, len(u.DeadLetters)*len(deadLetterCols))
	for _, d := range u.DeadLetters {
		args = append(args, u.Pipeline, d.Pos.Partition, d.Pos.Offset, d.Pos.Seq, d.TxnID, d.Raw, d.Reason)
	}
	if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
		return t.wrap("write dead letters", DeadLetterTable, "", err)
	}
	return nil
}

// DeadLetters lists the quarantined transactions of pipeline, oldest
// first. A target without the table has none.
func (t *DB) DeadLetters(ctx context.Context, pipeline string) ([]sink.DeadLetter, error) {
	d := t.dialect
	q := "SELECT " + d.Quote("id") + ", " + d.Quote("source_partition") + ", " + d.Quote("position") + ", " + d.Quote("seq") + ", " +
		d.Quote("txn_id") + ", " + d.Quote("raw") + ", " + d.Quote("reason") + ", " + d.Quote("created_at") +
		" FROM " + d.Quote(DeadLetterTable) + " WHERE " + d.Quote("pipeline") + " = " + placeholder(d, 1) + " ORDER BY " + d.Quote("id")
	rows, err := t.db.QueryContext(ctx, q, pipeline)
	if err != nil {
		if _, derr := d.Describe(ctx, t.db, schema.Name{Name: DeadLetterTable}); derr != nil {
			return nil, nil // no table: nothing was ever quarantined
		}
		return nil, t.wrap("read dead letters", DeadLetterTable, "", err)
	}
	defer rows.Close()
	var out []sink.DeadLetter
	for rows.Next() {
		r := sink.DeadLetter{Pipeline: pipeline}
		var created any
		if err := rows.Scan(&r.ID, &r.Partition, &r.Offset, &r.Seq, &r.TxnID, &r.Raw, &r.Reason, &created); err != nil {
			return nil, t.wrap("read dead letters", DeadLetterTable, "", err)
		}
		r.CreatedAt = formatTime(created)
		out = append(out, r)
	}
	return out, rows.Err()
}

// formatTime renders a time a server returned (a time.Time, or text on
// SQLite) in RFC 3339, UTC.
func formatTime(v any) string {
	if tm, ok := v.(interface{ UTC() time.Time }); ok {
		return tm.UTC().Format(time.RFC3339)
	}
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return fmt.Sprint(v)
}
