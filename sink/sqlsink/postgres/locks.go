package postgres

import (
	"context"
	"database/sql"

	"github.com/txsink/txsink/sink/sqlsink"
)

var _ sqlsink.Locker = Dialect{}

// OpenLocks implements target.Locker with session-level advisory locks,
// which belong to the connection that took them: a process that dies gives
// them up with its connection. Advisory locks are a database's, and the
// progress table is a schema's, so each lock is scoped by the schema the
// connection writes to.
func (Dialect) OpenLocks(ctx context.Context, db *sql.DB) (sqlsink.Locks, error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	var schema sql.NullString
	if err := c.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		c.Close()
		return nil, err
	}
	return &sqlsink.ConnLocks{Conn: c, LockSQL: "SELECT pg_try_advisory_lock($1)", UnlockSQL: "SELECT pg_advisory_unlock($1)",
		Arg: func(key string) any { return sqlsink.LockKey64(sqlsink.LockKey(schema.String, key)) }}, nil
}
