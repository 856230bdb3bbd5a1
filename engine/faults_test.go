package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
)

// killOthers kills every other connection to the test database: the
// pipeline's, in the middle of its transaction (KILL CONNECTION on
// MariaDB, pg_terminate_backend on PostgreSQL). It returns how many it
// killed.
func killOthers(t *testing.T, db *testdb.DB, app string) int {
	t.Helper()
	var q string
	var args []any
	switch db.Dialect {
	case "mysql":
		// The test's database is its own: only the pipeline uses it.
		q = "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND ID <> CONNECTION_ID()"
	case "postgres":
		// Tests share the database (each has a schema), so the
		// pipeline's connections are told apart by application_name.
		q = "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()"
		args = append(args, app)
	}
	rows, err := db.SQL.Query(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	for _, id := range ids {
		var err error
		if db.Dialect == "mysql" {
			_, err = db.SQL.Exec(fmt.Sprintf("KILL CONNECTION %d", id))
		} else {
			_, err = db.SQL.Exec("SELECT pg_terminate_backend($1)", id)
		}
		if err != nil {
			t.Logf("kill %d: %v", id, err)
		}
	}
	return len(ids)
}

// TestConnectionKilledMidTransaction kills the pipeline's connection
// inside its transaction, after every statement and before COMMIT, on
// several commits: txsink reconnects, applies the unit again from the
// start, and ends with the exact state and no duplicate.
func TestConnectionKilledMidTransaction(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 300, Partitions: 2, Seed: 31, Events: true})
	for _, d := range []string{"mysql", "postgres"} {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			db := testdb.Open(t, d)
			db.Exec(t, workload.Schema(d)...)
			cfg := workloadPipeline(db, writeWorkload(t, res))
			cfg.Sink.FlushMaxRows = 200
			app := fmt.Sprintf("txsink-kill-%d", time.Now().UnixNano())
			if d == "postgres" {
				cfg.Target.URL += "&application_name=" + app
			}
			attempts, killed := 0, 0
			e := newEngine(t, cfg, engine.WithBeforeCommitHook(func(*commit.Unit) error {
				attempts++
				if attempts%3 == 1 { // the first attempt of every third unit or so
					killed += killOthers(t, db, app)
				}
				return nil
			}))
			if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
				t.Fatal(err)
			}
			st := e.Stats()
			t.Logf("%d commit attempts, %d connections killed, %d retries, %d commits", attempts, killed, st.Retries, st.Commits)
			if killed == 0 || st.Retries == 0 {
				t.Fatalf("the test killed %d connections and caused %d retries; it tests nothing", killed, st.Retries)
			}
			checkFinal(t, db, res)
		})
	}
}

// TestLockWaitIsRetried holds a lock on a target row from another
// session, so the pipeline's statement times out waiting (MySQL 1205,
// PostgreSQL 55P03): the error is transient, the unit is retried with
// backoff, and once the lock is released it commits.
func TestLockWaitIsRetried(t *testing.T) {
	for _, d := range []string{"mysql", "postgres"} {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			db := testdb.Open(t, d)
			db.Exec(t, `CREATE TABLE locked (id INT NOT NULL PRIMARY KEY, v INT NOT NULL)`, `INSERT INTO locked (id, v) VALUES (1, 0)`)
			cfg := pipeline(db, config.Table{Source: "s.locked"})
			// Wait at most a moment for a lock, so the test is quick.
			if d == "mysql" {
				cfg.Target.URL += "?innodb_lock_wait_timeout=1"
			} else {
				cfg.Target.URL += "&lock_timeout=300"
			}
			blocker, err := db.SQL.Begin()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := blocker.Exec("UPDATE locked SET v = 99 WHERE id = 1"); err != nil {
				t.Fatal(err)
			}
			released := false
			release := func() {
				if !released {
					released = true
					if err := blocker.Commit(); err != nil {
						t.Error(err)
					}
				}
			}
			t.Cleanup(release)
			retries := &retryHook{onRetry: release}
			f := &feeder{t: t, e: newEngine(t, cfg, engine.WithHooks(retries))}
			f.must(changelog.UpdateAfter, "s.locked", changelog.Row{}, row("id", int64(1), "v", int64(7)))
			start := time.Now()
			f.flush()
			if retries.n == 0 {
				t.Fatal("the lock wait was not retried")
			}
			t.Logf("committed after %d retries in %v", retries.n, time.Since(start).Round(time.Millisecond))
			if got := query(t, db, "SELECT v FROM locked"); got != "7" {
				t.Errorf("v = %s, want 7", got)
			}
		})
	}
}

type retryHook struct {
	n       int
	onRetry func()
}

func (h *retryHook) OnRetry(int, time.Duration, error) {
	h.n++
	h.onRetry()
}

// TestLostCommitAnswerIsNotAppliedTwice makes every third COMMIT report a
// lost connection although the server committed. txsink asks the progress
// table before it retries, finds the unit there, and does not apply it
// again: the append-only table has no duplicate.
func TestLostCommitAnswerIsNotAppliedTwice(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 300, Partitions: 2, Seed: 33, Events: true})
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, workload.Schema(db.Dialect)...)
		cfg := workloadPipeline(db, writeWorkload(t, res))
		cfg.Sink.FlushMaxRows = 100
		cfg.Sink.FlushCoalesce = false // enough commits for every third to lose its answer
		n := 0
		e := newEngine(t, cfg, engine.WithLostCommitAck(func(*commit.Unit) bool {
			n++
			return n%3 == 0
		}))
		if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		st := e.Stats()
		if st.Retries == 0 {
			t.Fatal("no lost answer was simulated")
		}
		t.Logf("%d commits, %d lost answers", st.Commits, st.Retries)
		checkFinal(t, db, res)
	})
}
