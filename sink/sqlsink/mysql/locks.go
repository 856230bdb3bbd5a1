package mysql

import (
	"context"
	"database/sql"

	"github.com/txsink/txsink/sink/sqlsink"
)

var _ sqlsink.Locker = (*Dialect)(nil)

// OpenLocks implements target.Locker with GET_LOCK, whose locks belong to
// the connection that took them: a process that dies gives them up with
// its connection. GET_LOCK's names are the server's, not a database's, so
// each is scoped by the connection's database: pipelines of one name in
// two databases of a server hold locks of their own.
func (d *Dialect) OpenLocks(ctx context.Context, db *sql.DB) (sqlsink.Locks, error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	var database sql.NullString
	if err := c.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&database); err != nil {
		c.Close()
		return nil, err
	}
	return &sqlsink.ConnLocks{Conn: c, LockSQL: "SELECT GET_LOCK(?, 0)", UnlockSQL: "DO RELEASE_LOCK(?)",
		Arg: func(key string) any { return sqlsink.LockKey(database.String, key) }}, nil
}
