//go:build !linux

package sqlite

import (
	"context"
	"database/sql"

	"github.com/txsink/txsink/target"
)

// OpenLocks implements target.Locker: off Linux, txsink takes no locks on a
// SQLite file (target.ErrNoLocks), so txsink reset cannot tell whether a
// pipeline runs on it.
func (d Dialect) OpenLocks(context.Context, *sql.DB) (target.Locks, error) {
	return nil, target.ErrNoLocks
}
