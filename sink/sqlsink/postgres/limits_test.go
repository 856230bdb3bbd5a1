package postgres_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/internal/fault"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/sink/sqlsink/postgres"
)

// TestIdleInTransactionTimeout ends a unit's session with PostgreSQL's
// idle_in_transaction_session_timeout (25P03) before its COMMIT: the error
// is transient, blames no row (whether it ends the session at COMMIT or,
// on a slow machine, during a statement), and the unit applied again
// commits.
func TestIdleInTransactionTimeout(t *testing.T) {
	db := testdb.Postgres(t)
	db.Exec(t, `CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT NOT NULL)`)
	u, err := url.Parse(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	app := "txsink-idle-" + strings.ReplaceAll(t.Name(), "/", "-")
	q := u.Query()
	q.Set("idle_in_transaction_session_timeout", "1000")
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	ctx := context.Background()
	tdb, err := postgres.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tdb.Close() })
	tbl := describe(t, tdb, "t")
	first := true
	hooks := &fault.Hooks{BeforeCommit: func(*commit.Unit) error {
		if !first {
			return nil
		}
		first = false
		// The unit's session is idle in its transaction now; wait for
		// the server to end it.
		return waitFor(ctx, func() (bool, error) {
			var n int
			err := db.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = $1 AND state LIKE 'idle in transaction%'`, app).Scan(&n)
			return n == 0, err
		})
	}}
	unit := func() *commit.Unit {
		return &commit.Unit{Pipeline: "idle", Batches: []*commit.Batch{{Table: tbl,
			Upserts: []commit.Group{{Columns: []string{"id", "v"}, Rows: [][]any{{int64(1), "a"}, {int64(2), "b"}}, Pos: positions(2)}}}}}
	}
	// Only the first Apply waits for the server to end its session.
	err = tdb.Apply(fault.With(ctx, hooks), unit())
	var te *sink.Error
	if !errors.As(err, &te) || !te.Transient || te.Key != "" || strings.Contains(err.Error(), "fix the value") {
		t.Fatalf("a session ended by idle_in_transaction_session_timeout: got %v, want a transient error naming no row", err)
	}
	t.Logf("ended session: %v", err)
	apply(t, tdb, unit())
	if got := queryStrings(t, db, `SELECT id::text FROM t ORDER BY id`); strings.Join(got, ",") != "1,2" {
		t.Errorf("rows after the retry: %v", got)
	}
}

// waitFor polls cond until it holds, it fails, or ten seconds pass.
func waitFor(ctx context.Context, cond func() (bool, error)) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for {
		ok, err := cond()
		if ok || err != nil {
			return err
		}
		select {
		case <-tick.C:
		case <-deadline:
			return errors.New("the condition did not hold within 10s")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
