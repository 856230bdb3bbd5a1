package sqlsink

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"sort"
	"time"
)

// Locker is an optional interface of a Dialect whose server can hold a lock
// for as long as a session lives. A running pipeline holds one for each
// partition it reads, so that a command that must not run beside it (txsink
// reset) can tell and refuse. Safety never rests on these locks — the epoch
// in the progress table fences a second owner whatever happens — they turn
// "the running instance is fenced at its next commit" into "stop it first".
type Locker interface {
	// OpenLocks returns a session of db that holds locks until it is
	// closed.
	OpenLocks(ctx context.Context, db *sql.DB) (Locks, error)
}

// Locks is a session holding named locks.
type Locks interface {
	// TryLock takes the lock named key without waiting; false when another
	// session holds it.
	TryLock(ctx context.Context, key string) (bool, error)
	// Unlock gives up the lock named key.
	Unlock(ctx context.Context, key string) error
	// Close gives up every lock of the session.
	Close() error
}

// ErrNoLocks is returned by a Locker that cannot hold locks for this
// database (an in-memory SQLite database); callers treat it as a dialect
// without locks.
var ErrNoLocks = errors.New("this database holds no locks")

// LockKey returns the lock name of a pipeline's partition: 48 hex digits of
// a SHA-256, short enough for every server's limit on lock names (MySQL's
// is 64 characters), so any partition name fits. A dialect whose lock
// names span databases scopes them with LockKey(database, key).
func LockKey(pipeline, partition string) string {
	h := sha256.Sum256([]byte(pipeline + "\x00" + partition))
	return "txsink:" + hex.EncodeToString(h[:24])
}

// LockKey64 folds a lock name into the 64-bit key PostgreSQL's advisory
// locks take.
func LockKey64(key string) int64 {
	h := sha256.Sum256([]byte(key))
	return int64(binary.BigEndian.Uint64(h[:8]))
}

// Hold takes the lock of each of pipeline's partitions for this DB's
// session of locks, and returns those another session holds already (a
// second instance of the pipeline, or txsink reset at work). A dialect
// that is no Locker holds nothing.
func (t *DB) Hold(ctx context.Context, pipeline string, partitions []string) (busy []string, err error) {
	lk, ok := t.dialect.(Locker)
	if !ok {
		return nil, nil
	}
	t.lockMu.Lock()
	defer t.lockMu.Unlock()
	if t.locks == nil {
		if t.locks, err = lk.OpenLocks(ctx, t.db); err != nil {
			if errors.Is(err, ErrNoLocks) {
				return nil, nil
			}
			return nil, t.wrap("lock partitions", "", "", err)
		}
		t.held = map[string]bool{}
	}
	for _, p := range partitions {
		key := LockKey(pipeline, p)
		if t.held[key] {
			continue
		}
		got, err := t.locks.TryLock(ctx, key)
		if err != nil {
			return busy, t.wrap("lock partition "+p, "", "", err)
		}
		if got {
			t.held[key] = true
		} else {
			busy = append(busy, p)
		}
	}
	return busy, nil
}

// Release gives up the locks Hold took for pipeline's partitions.
func (t *DB) Release(ctx context.Context, pipeline string, partitions []string) error {
	t.lockMu.Lock()
	defer t.lockMu.Unlock()
	if t.locks == nil {
		return nil
	}
	var errs []error
	for _, p := range partitions {
		key := LockKey(pipeline, p)
		if t.held[key] {
			delete(t.held, key)
			errs = append(errs, t.locks.Unlock(ctx, key))
		}
	}
	return errors.Join(errs...)
}

// Held returns which of pipeline's partitions a session other than this
// DB's holds: a running instance reads them. It probes each lock on a
// session of its own, and gives it up at once; the second result is false
// when the dialect cannot tell (it is no Locker, or an in-memory database).
func (t *DB) Held(ctx context.Context, pipeline string, partitions []string) (held []string, known bool, err error) {
	lk, ok := t.dialect.(Locker)
	if !ok {
		return nil, false, nil
	}
	probe, err := lk.OpenLocks(ctx, t.db)
	if errors.Is(err, ErrNoLocks) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, t.wrap("probe partition locks", "", "", err)
	}
	defer probe.Close()
	for _, p := range partitions {
		key := LockKey(pipeline, p)
		got, err := probe.TryLock(ctx, key)
		if err != nil {
			return nil, false, t.wrap("probe the lock of partition "+p, "", "", err)
		}
		if !got {
			held = append(held, p)
			continue
		}
		if err := probe.Unlock(ctx, key); err != nil {
			return nil, false, t.wrap("probe the lock of partition "+p, "", "", err)
		}
	}
	sort.Strings(held)
	return held, true, nil
}

// closeLocks gives up every lock this DB holds. Each is unlocked before
// the session closes: a server ends a closed session on a thread of its
// own, a moment later, and a txsink reset run just after this process
// exits must not find the locks still held.
func (t *DB) closeLocks() error {
	t.lockMu.Lock()
	defer t.lockMu.Unlock()
	if t.locks == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	for key := range t.held {
		errs = append(errs, t.locks.Unlock(ctx, key))
	}
	errs = append(errs, t.locks.Close())
	t.locks, t.held = nil, nil
	return errors.Join(errs...)
}

// ConnLocks is Locks over one connection, for servers whose locks belong to
// a session: statements lock and unlock, and closing the connection gives
// every lock up (as a crash of the process does).
type ConnLocks struct {
	Conn *sql.Conn
	// LockSQL and UnlockSQL take the key, converted by Arg, as their only
	// parameter; LockSQL returns one row whose value is true (or 1) when
	// the lock was taken.
	LockSQL, UnlockSQL string
	Arg                func(key string) any
}

// TryLock implements Locks.
func (c *ConnLocks) TryLock(ctx context.Context, key string) (bool, error) {
	var got sql.NullBool
	if err := c.Conn.QueryRowContext(ctx, c.LockSQL, c.Arg(key)).Scan(&got); err != nil {
		return false, err
	}
	return got.Valid && got.Bool, nil
}

// Unlock implements Locks.
func (c *ConnLocks) Unlock(ctx context.Context, key string) error {
	_, err := c.Conn.ExecContext(ctx, c.UnlockSQL, c.Arg(key))
	return err
}

// Close implements Locks.
func (c *ConnLocks) Close() error { return c.Conn.Close() }
