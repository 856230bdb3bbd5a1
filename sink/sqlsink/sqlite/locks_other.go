//go:build !linux

package sqlite

import (
	"context"
	"database/sql"

	"github.com/txsink/txsink/sink/sqlsink"
)

// OpenLocks implements target.Locker: off Linux, txsink takes no locks on a
// SQLite file (target.ErrNoLocks), so txsink reset cannot tell whether a
// pipeline runs on it.
func (d Dialect) OpenLocks(context.Context, *sql.DB) (sqlsink.Locks, error) {
	return nil, sqlsink.ErrNoLocks
}
