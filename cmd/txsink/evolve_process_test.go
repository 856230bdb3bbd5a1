//go:build unix

package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/sink/sinktest"
)

// pollEvery is how often the waits below look again.
const pollEvery = 10 * time.Millisecond

// dbzEvolving is a Debezium record with the schema envelope of
// inventory.<table>: fields id and name, and extra when the source has
// added it.
func dbzEvolving(table string, extra bool, op, before, after string) string {
	fields := `[{"type":"int64","optional":false,"field":"id"},{"type":"string","optional":true,"field":"name"}`
	if extra {
		fields += `,{"type":"string","optional":true,"field":"extra","parameters":{"__debezium.source.column.type":"VARCHAR","__debezium.source.column.length":"5"}}`
	}
	fields += `]`
	return `{"schema":{"type":"struct","fields":[` +
		`{"type":"struct","optional":true,"field":"before","fields":` + fields + `},` +
		`{"type":"struct","optional":true,"field":"after","fields":` + fields + `},` +
		`{"type":"struct","optional":false,"field":"source","fields":[]},` +
		`{"type":"string","optional":false,"field":"op"}],"optional":false,"name":"x.Envelope"},` +
		`"payload":{"before":` + before + `,"after":` + after + `,"source":{"db":"inventory","table":"` + table + `"},"op":"` + op + `"}}`
}

// TestSIGKILLBetweenAlterAndUnit kills the real txsink binary with SIGKILL
// after it has met a column the source added and before the unit that
// needs the column commits, then runs it again.
//
// The changelog adds column extra to orders at its second record; its
// third updates a row of items, which the test holds locked, so the unit
// waits there, inside its transaction, until the kill. On MariaDB the
// ALTER committed in a step of its own before the unit: after the kill
// the column is there and no row of the unit is. On PostgreSQL the ALTER
// ran in the unit's transaction: neither the column nor a row landed.
// Either way the next run lands exact, with the column once, and exits 0.
func TestSIGKILLBetweenAlterAndUnit(t *testing.T) {
	for _, d := range []string{"mysql", "postgres"} {
		t.Run(d, func(t *testing.T) {
			db := testdb.Open(t, d)
			for _, tbl := range []string{"orders", "items"} {
				db.Exec(t, "CREATE TABLE "+tbl+" (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(20))")
			}
			db.Exec(t, "INSERT INTO items (id, name) VALUES (1, 'old')")
			dir := t.TempDir()
			lines := []string{
				dbzEvolving("orders", false, "c", "null", `{"id":1,"name":"a"}`),
				dbzEvolving("orders", true, "c", "null", `{"id":2,"name":"b","extra":"x"}`),
				dbzEvolving("items", false, "u", `{"id":1,"name":"old"}`, `{"id":1,"name":"new"}`),
			}
			if err := os.WriteFile(filepath.Join(dir, "changes.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := filepath.Join(dir, "pipeline.yaml")
			yaml := "name: evolve-kill\nsource:\n  type: file\n  paths: [changes.jsonl]\n  format: debezium-json\n" +
				"target:\n  url: " + strconv.Quote(db.URL) + "\n" +
				"tables:\n  - source: \"inventory.*\"\n    primary-key: [id]\n" +
				"schema:\n  evolve: add-columns\n"
			if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}

			// Hold items' row 1: the unit's write of it waits.
			ctx := context.Background()
			holder, err := db.SQL.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Close()
			if _, err := holder.ExecContext(ctx, "BEGIN"); err != nil {
				t.Fatal(err)
			}
			if _, err := holder.ExecContext(ctx, "SELECT name FROM items WHERE id = 1 FOR UPDATE"); err != nil {
				t.Fatal(err)
			}
			p := start(t, "run", "--config", cfg, "--log-level", "debug")
			waiters := waitBlocked(t, p, db, holder)
			if got, want := columnCount(t, db, "orders", "extra"), map[string]int{"mysql": 1, "postgres": 0}[d]; got != want {
				t.Errorf("while the unit waits: %d columns extra in orders, want %d", got, want)
			}
			p.signal(syscall.SIGKILL)
			p.wait()
			if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("txsink ended with %v, not by SIGKILL\nstderr:\n%s", p.cmd.ProcessState, tail(p.Stderr()))
			}
			// The killed run's session ends once its statement gets the
			// lock and it reads its next command from a closed socket.
			if _, err := holder.ExecContext(ctx, "ROLLBACK"); err != nil {
				t.Fatal(err)
			}
			waitGone(t, db, waiters)

			if got, want := columnCount(t, db, "orders", "extra"), map[string]int{"mysql": 1, "postgres": 0}[d]; got != want {
				t.Errorf("after the kill: %d columns extra in orders, want %d", got, want)
			}
			if got := sinktest.Rows(t, db.SQL, "SELECT id FROM orders"); got != "" {
				t.Errorf("after the kill: orders holds %q, want nothing of the unit", got)
			}
			if got := sinktest.Rows(t, db.SQL, "SELECT name FROM items"); got != "old" {
				t.Errorf("after the kill: items holds %q, want the row as it was", got)
			}

			code, _, stderr := runTxsink(t, "run", "--config", cfg)
			if code != 0 {
				t.Fatalf("the run after the kill exited %d, want 0\nstderr:\n%s", code, tail(stderr))
			}
			if strings.Contains(stderr, "level=ERROR") {
				t.Errorf("the run after the kill logged an error:\n%s", tail(stderr))
			}
			if got, want := sinktest.Rows(t, db.SQL, "SELECT id, name, COALESCE(extra, '-') FROM orders ORDER BY id"), "1|a|-\n2|b|x"; got != want {
				t.Errorf("orders: got\n%s\nwant\n%s", got, want)
			}
			if got := sinktest.Rows(t, db.SQL, "SELECT name FROM items"); got != "new" {
				t.Errorf("items: got %q, want new", got)
			}
			if got := columnCount(t, db, "orders", "extra"); got != 1 {
				t.Errorf("%d columns extra in orders, want 1", got)
			}
		})
	}
}

// waitBlocked waits until a session of txsink waits for the lock holder
// holds, and returns the ids of the sessions waiting (thread ids on
// MariaDB, backend pids on PostgreSQL). It looks from a connection of its
// own: PostgreSQL shows a transaction the activity it saw first.
func waitBlocked(t *testing.T, p *proc, db *testdb.DB, holder *sql.Conn) []int64 {
	t.Helper()
	var id int64
	if db.Dialect == "postgres" {
		if err := holder.QueryRowContext(context.Background(), "SELECT pg_backend_pid()").Scan(&id); err != nil {
			t.Fatal(err)
		}
	}
	// The test's MariaDB database is its own: a session of it writing
	// items is txsink's, and holder's lock keeps the write from ending.
	// (Not INNODB_TRX: MariaDB refreshes it only when no one read it for
	// 100ms, which a poll, or any other test's, keeps from happening.)
	q := `SELECT ID FROM information_schema.PROCESSLIST
		WHERE DB = DATABASE() AND COMMAND = 'Query' AND INFO LIKE '%items%' AND ID <> CONNECTION_ID()`
	if db.Dialect == "postgres" {
		q = fmt.Sprintf(`SELECT pid FROM pg_stat_activity WHERE %d = ANY (pg_blocking_pids(pid))`, id)
	}
	deadline := time.NewTimer(startDeadline)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		if ids := int64s(t, db, q); len(ids) > 0 {
			return ids
		}
		select {
		case <-tick.C:
		case <-p.done:
			t.Fatalf("txsink exited (%v) before its unit waited for the lock\nstderr:\n%s", p.cmd.ProcessState, tail(p.Stderr()))
		case <-deadline.C:
			t.Fatalf("no session of txsink waited for the lock in %s\nstderr:\n%s", startDeadline, tail(p.Stderr()))
		}
	}
}

// waitGone waits until the sessions ids have ended.
func waitGone(t *testing.T, db *testdb.DB, ids []int64) {
	t.Helper()
	q := "SELECT ID FROM information_schema.PROCESSLIST"
	if db.Dialect == "postgres" {
		q = "SELECT pid FROM pg_stat_activity"
	}
	deadline := time.NewTimer(exitDeadline)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		alive := 0
		for _, id := range int64s(t, db, q) {
			for _, w := range ids {
				if id == w {
					alive++
				}
			}
		}
		if alive == 0 {
			return
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("the killed run's sessions %v did not end in %s", ids, exitDeadline)
		}
	}
}

// int64s runs q on db and returns its one column of integers.
func int64s(t *testing.T, db *testdb.DB, q string) []int64 {
	t.Helper()
	var out []int64
	for _, f := range strings.Fields(sinktest.Rows(t, db.SQL, q)) {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		out = append(out, n)
	}
	return out
}

// columnCount counts the columns called column of table in db's own
// database or schema.
func columnCount(t *testing.T, db *testdb.DB, table, column string) int {
	t.Helper()
	own := "DATABASE()"
	if db.Dialect == "postgres" {
		own = "current_schema()"
	}
	var n int
	if err := db.SQL.QueryRow(fmt.Sprintf("SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = %s AND table_name = '%s' AND column_name = '%s'",
		own, table, column)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
