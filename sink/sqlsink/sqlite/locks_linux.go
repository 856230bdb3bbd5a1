//go:build linux

package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"os"

	"golang.org/x/sys/unix"

	"github.com/txsink/txsink/sink/sqlsink"
)

var _ sqlsink.Locker = Dialect{}

// OpenLocks implements target.Locker with open-file-description record
// locks on bytes of the database file far past anything SQLite locks (it
// locks bytes from 1 GiB on): one byte per key, at 2^50 plus a hash of the
// key. Such locks belong to the open file, so a process that dies gives them
// up, and two opens in one process conflict as two processes do. An
// in-memory database has no file and no locks (target.ErrNoLocks).
func (d Dialect) OpenLocks(ctx context.Context, db *sql.DB) (sqlsink.Locks, error) {
	if d.Path == "" || d.Path == ":memory:" {
		return nil, sqlsink.ErrNoLocks
	}
	f, err := os.OpenFile(d.Path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return &fileLocks{f: f}, nil
}

// lockBase is where the lock bytes start: past SQLite's own lock bytes and
// any file size SQLite allows.
const lockBase = 1 << 50

type fileLocks struct{ f *os.File }

func (l *fileLocks) byteOf(key string) int64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return lockBase + int64(h.Sum64()%(1<<40))
}

func (l *fileLocks) set(key string, typ int16) (bool, error) {
	lk := unix.Flock_t{Type: typ, Whence: 0, Start: l.byteOf(key), Len: 1}
	err := unix.FcntlFlock(l.f.Fd(), unix.F_OFD_SETLK, &lk)
	if err == unix.EAGAIN || err == unix.EACCES {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("lock %s: %w", l.f.Name(), err)
	}
	return true, nil
}

func (l *fileLocks) TryLock(_ context.Context, key string) (bool, error) {
	return l.set(key, unix.F_WRLCK)
}

func (l *fileLocks) Unlock(_ context.Context, key string) error {
	_, err := l.set(key, unix.F_UNLCK)
	return err
}

func (l *fileLocks) Close() error { return l.f.Close() }
