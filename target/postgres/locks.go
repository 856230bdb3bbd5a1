package postgres

import (
	"context"
	"database/sql"

	"github.com/txsink/txsink/target"
)

var _ target.Locker = Dialect{}

// OpenLocks implements target.Locker with session-level advisory locks,
// which belong to the connection that took them: a process that dies gives
// them up with its connection.
func (Dialect) OpenLocks(ctx context.Context, db *sql.DB) (target.Locks, error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &target.ConnLocks{Conn: c, LockSQL: "SELECT pg_try_advisory_lock($1)", UnlockSQL: "SELECT pg_advisory_unlock($1)",
		Arg: func(key string) any { return target.LockKey64(key) }}, nil
}
