package engine_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/sink"
)

// dbzVersioned is a Debezium record of inventory.orders with the schema
// envelope, whose fields are id, name and, when extra, a column the
// source added later.
func dbzVersioned(extra bool, op, before, after string) string {
	fields := `[{"type":"int64","optional":false,"field":"id"},{"type":"string","optional":true,"field":"name"}`
	if extra {
		fields += `,{"type":"string","optional":true,"field":"extra","parameters":{"__debezium.source.column.type":"VARCHAR","__debezium.source.column.length":"5"}}`
	}
	fields += `]`
	return `{"schema":` + fmt.Sprintf(dbzSchema, fields) + `,"payload":{"before":` + before + `,"after":` + after +
		`,"source":{"db":"inventory","table":"orders"},"op":"` + op + `"}}`
}

// canalVersioned is a Canal message of inventory.orders whose mysqlType
// declares extra when the source has added it.
func canalVersioned(extra bool, typ, data, old string) string {
	types := `"id":"bigint(20)","name":"varchar(10)"`
	if extra {
		types += `,"extra":"varchar(5)"`
	}
	return `{"data":[` + data + `],"old":` + old + `,"database":"inventory","table":"orders","type":"` + typ +
		`","isDdl":false,"pkNames":["id"],"mysqlType":{` + types + `}}`
}

// TestAddColumns streams a changelog in which the source adds a column
// mid-way, from an empty database on every server: with schema.evolve:
// add-columns the column is added and every change lands exact; without
// it the run stops at the first change that carries it, naming the
// table, the column, the position and the option.
func TestAddColumns(t *testing.T) {
	formats := []struct {
		format string
		key    []string
		lines  []string
	}{
		{"debezium-json", []string{"id"}, []string{
			dbzVersioned(false, "c", "null", `{"id":1,"name":"a"}`),
			dbzVersioned(true, "c", "null", `{"id":2,"name":"b","extra":"x😀"}`),
			dbzVersioned(true, "u", `{"id":1,"name":"a","extra":null}`, `{"id":1,"name":"a","extra":"y"}`),
		}},
		{"canal-json", nil, []string{
			canalVersioned(false, "INSERT", `{"id":"1","name":"a"}`, "null"),
			canalVersioned(true, "INSERT", `{"id":"2","name":"b","extra":"x😀"}`, "null"),
			canalVersioned(true, "UPDATE", `{"id":"1","name":"a","extra":"y"}`, `[{"extra":null}]`),
		}},
	}
	for _, f := range formats {
		for _, evolve := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/evolve=%v", f.format, evolve), func(t *testing.T) {
				forEachDialect(t, func(t *testing.T, db *testdb.DB) {
					cfg := creatingPipeline(t, db, f.format, f.key, f.lines)
					if evolve {
						cfg.Schema.Evolve = []string{config.SchemaEvolveAddColumns}
					}
					err := runOnce(t, cfg)
					if !evolve {
						for _, w := range []string{"changes.jsonl:2", "orders", "column extra", "does not have", "schema.evolve: add-columns"} {
							if err == nil || !strings.Contains(err.Error(), w) {
								t.Errorf("got %v, want an error holding %q", err, w)
							}
						}
						// The refused change shares the flush of the first: nothing is committed.
						if got := query(t, db, "SELECT id, name FROM "+db.Quote("orders")); got != "" {
							t.Errorf("after the refusal: got %q, want nothing committed", got)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					if got, want := query(t, db, "SELECT id, name, extra FROM "+db.Quote("orders")+" ORDER BY id"), "1|a|y\n2|b|x😀"; got != want {
						t.Errorf("got\n%s\nwant\n%s", got, want)
					}
					st, err := tableOf(t, db, "orders")
					if err != nil {
						t.Fatal(err)
					}
					if c, ok := st.Column("extra"); !ok || !c.Nullable || (db.Dialect != "sqlite" && c.Length != 5) {
						t.Errorf("column extra: %+v, want a NULL-able string of 5 characters", c)
					}
					if err := runOnce(t, cfg); err != nil {
						t.Fatalf("a second run: %v", err)
					}
				})
			})
		}
	}
}

// addsInUnit reports whether u adds a column in its own transaction.
func addsInUnit(u *commit.Unit) bool {
	for _, b := range u.Batches {
		if len(b.AddColumns) > 0 {
			return true
		}
	}
	return false
}

// hasExtra reports whether db's orders has column extra.
func hasExtra(t *testing.T, db *testdb.DB) bool {
	t.Helper()
	st, err := tableOf(t, db, "orders")
	if err != nil {
		t.Fatal(err)
	}
	_, ok := st.Column("extra")
	return ok
}

// evolvingLines is a Debezium changelog of inventory.orders in which the
// source adds column extra at the second record.
func evolvingLines() []string {
	return []string{
		dbzVersioned(false, "c", "null", `{"id":1,"name":"a"}`),
		dbzVersioned(true, "c", "null", `{"id":2,"name":"b","extra":"x"}`),
		dbzVersioned(true, "u", `{"id":1,"name":"a","extra":null}`, `{"id":1,"name":"a","extra":"y"}`),
	}
}

// TestAddColumnsInUnit proves where the ADD COLUMN runs on each server.
// On PostgreSQL and SQLite it runs in the unit's own transaction: a unit
// that fails before COMMIT leaves neither the column nor its rows, and a
// retry of the unit adds the column again. On MariaDB the ALTER commits
// in a step of its own before the unit: the failed unit leaves the
// column, which the next run takes as added. Either way the next run
// lands exact.
func TestAddColumnsInUnit(t *testing.T) {
	const want = "1|a|y\n2|b|x"
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		inUnit := db.Dialect != "mysql"
		cfg := creatingPipeline(t, db, "debezium-json", []string{"id"}, evolvingLines())
		cfg.Schema.Evolve = []string{config.SchemaEvolveAddColumns}

		// A unit that fails for good before its COMMIT.
		fail := errors.New("the unit is refused before COMMIT (injected)")
		var carried bool
		e := newEngine(t, cfg, engine.WithBeforeCommitHook(func(u *commit.Unit) error {
			carried = carried || addsInUnit(u)
			if _, ups, _ := u.Rows(); ups > 0 {
				return fail
			}
			return nil
		}))
		if err := e.Run(context.Background(), engine.RunOptions{}); !errors.Is(err, fail) {
			t.Fatalf("got %v, want the injected failure", err)
		}
		e.Close()
		if carried != inUnit {
			t.Errorf("a unit carried the ADD COLUMN: %v, want %v", carried, inUnit)
		}
		if got := hasExtra(t, db); got != !inUnit {
			t.Errorf("after the failed unit, orders has column extra: %v, want %v", got, !inUnit)
		}
		if got := query(t, db, "SELECT id FROM "+db.Quote("orders")); got != "" {
			t.Errorf("after the failed unit: rows %q, want none", got)
		}

		// A unit whose first attempt fails for a transient reason: the
		// retry runs the ALTER again.
		attempts := 0
		e = newEngine(t, cfg, engine.WithBeforeCommitHook(func(u *commit.Unit) error {
			attempts++
			if attempts == 1 {
				return &sink.Error{Op: "commit", Transient: true, Err: errors.New("connection lost (injected)")}
			}
			return nil
		}))
		if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		e.Close()
		if attempts < 2 {
			t.Errorf("%d attempts, want the unit retried", attempts)
		}
		if got := query(t, db, "SELECT id, name, extra FROM "+db.Quote("orders")+" ORDER BY id"); got != want {
			t.Errorf("got\n%s\nwant\n%s", got, want)
		}
		if err := runOnce(t, cfg); err != nil {
			t.Fatalf("a third run: %v", err)
		}
	})
}

// TestAddColumnsGoesOn streams a changelog (Debezium with the schema
// envelope, and Canal) whose source adds a column and then goes on
// writing it, one change per unit, from an empty database: the run starts again
// from its last commit once, when it meets the column (what it had
// buffered was converted for the table's old shape), and never after
// the column is added, on every server: on PostgreSQL and SQLite the
// units after the one that added the column go on with the table as
// planned.
func TestAddColumnsGoesOn(t *testing.T) {
	dbz := evolvingLines()
	canal := []string{
		canalVersioned(false, "INSERT", `{"id":"1","name":"a"}`, "null"),
		canalVersioned(true, "INSERT", `{"id":"2","name":"b","extra":"x"}`, "null"),
		canalVersioned(true, "UPDATE", `{"id":"1","name":"a","extra":"y"}`, `[{"extra":null}]`),
	}
	for i := 3; i <= 8; i++ {
		dbz = append(dbz, dbzVersioned(true, "c", "null", fmt.Sprintf(`{"id":%d,"name":"n","extra":"e%d"}`, i, i)))
		canal = append(canal, canalVersioned(true, "INSERT", fmt.Sprintf(`{"id":"%d","name":"n","extra":"e%d"}`, i, i), "null"))
	}
	formats := []struct {
		format string
		key    []string
		lines  []string
	}{
		{"debezium-json", []string{"id"}, dbz},
		{"canal-json", nil, canal},
	}
	for _, f := range formats {
		t.Run(f.format, func(t *testing.T) {
			forEachDialect(t, func(t *testing.T, db *testdb.DB) {
				cfg := creatingPipeline(t, db, f.format, f.key, f.lines)
				cfg.Schema.Evolve = []string{config.SchemaEvolveAddColumns}
				cfg.Sink.FlushMaxRows, cfg.Sink.FlushCoalesce = 1, false
				logs := &records{}
				var commits int
				e := newEngine(t, cfg, engine.WithLogger(slog.New(logs)), engine.WithCommitHook(func(*commit.Unit) { commits++ }))
				if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
					t.Fatal(err)
				}
				if got := len(logs.find("a target table was altered while txsink ran")); got != 1 {
					t.Errorf("%d starts again, want 1 (when the column appears)", got)
				}
				if commits < len(f.lines)-1 {
					t.Errorf("%d commits, want one per change after the first", commits)
				}
				want := "1|a|y\n2|b|x\n3|n|e3\n4|n|e4\n5|n|e5\n6|n|e6\n7|n|e7\n8|n|e8"
				if got := query(t, db, "SELECT id, name, extra FROM "+db.Quote("orders")+" ORDER BY id"); got != want {
					t.Errorf("got\n%s\nwant\n%s", got, want)
				}
			})
		})
	}
}

// dbzTxnRecord is a Debezium record with the schema envelope of
// inventory.<table> (id, name, and extra when the source has added it),
// in source transaction txn at total_order n.
func dbzTxnRecord(table string, extra bool, op, before, after, txn string, n int) string {
	fields := `[{"type":"int64","optional":false,"field":"id"},{"type":"string","optional":true,"field":"name"}`
	if extra {
		fields += `,{"type":"string","optional":true,"field":"extra","parameters":{"__debezium.source.column.type":"VARCHAR","__debezium.source.column.length":"5"}}`
	}
	fields += `]`
	return `{"schema":` + fmt.Sprintf(dbzSchema, fields) + `,"payload":{"before":` + before + `,"after":` + after +
		`,"source":{"db":"inventory","table":"` + table + `"},"op":"` + op + `","transaction":{"id":"` + txn + `","total_order":` + fmt.Sprint(n) + `,"data_collection_order":1}}}`
}

// TestAddColumnsTransactionMode runs transaction mode (multi-table units
// of whole source transactions) with schema.evolve: add-columns on every
// server: each source transaction writes the same key and name into
// orders and items, and from the third one on, both tables' records carry
// column extra. The column is added to both tables, every row lands
// exact, and a reader polling throughout, as every commit, never sees a
// source transaction half applied (a key in one table and not the other,
// or the two names apart).
func TestAddColumnsTransactionMode(t *testing.T) {
	const txns = 12
	var lines []string
	for k := 1; k <= txns; k++ {
		id := fmt.Sprintf("%d:1", k)
		lines = append(lines, `{"status":"BEGIN","id":"`+id+`","event_count":null}`)
		extra := k >= 3
		n := 0
		for _, tbl := range []string{"orders", "items"} {
			row := fmt.Sprintf(`{"id":%d,"name":"t%d"}`, k, k)
			if extra {
				row = fmt.Sprintf(`{"id":%d,"name":"t%d","extra":"%s%d"}`, k, k, tbl[:1], k)
			}
			n++
			lines = append(lines, dbzTxnRecord(tbl, extra, "c", "null", row, id, n))
			if k > 1 {
				// Key 1 takes each transaction's name, in both tables.
				n++
				lines = append(lines, dbzTxnRecord(tbl, extra, "u", `{"id":1,"name":"x"}`, fmt.Sprintf(`{"id":1,"name":"t%d"}`, k), id, n))
			}
		}
		lines = append(lines, `{"status":"END","id":"`+id+`","event_count":`+fmt.Sprint(n)+`,"data_collections":[]}`)
	}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		for _, tbl := range []string{"orders", "items"} {
			db.Exec(t, "CREATE TABLE "+db.Quote(tbl)+" (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(20))")
		}
		cfg := txnPipeline(creatingPipeline(t, db, "debezium-json", []string{"id"}, lines))
		cfg.Schema.Evolve = []string{config.SchemaEvolveAddColumns}
		// Every source transaction its own commit (see
		// TestSeed000Section19).
		cfg.Sink.FlushMaxRows, cfg.Sink.FlushCoalesce = 1, false
		cfg.Sink.TxnMiniSwitchInterval, cfg.Sink.TxnBufferSize = 0, 1
		broken := `SELECT (SELECT COUNT(*) FROM orders o LEFT JOIN items i ON i.id = o.id WHERE i.id IS NULL OR i.name <> o.name)` +
			` + (SELECT COUNT(*) FROM items i LEFT JOIN orders o ON o.id = i.id WHERE o.id IS NULL)`
		var commits, bothInUnit atomic.Int64
		e := newEngine(t, cfg, engine.WithCommitHook(func(u *commit.Unit) {
			commits.Add(1)
			added := 0
			for _, b := range u.Batches {
				if len(b.AddColumns) > 0 {
					added++
				}
			}
			if added == 2 {
				bothInUnit.Add(1)
			}
			if got := query(t, db, broken); got != "0" {
				t.Errorf("after a commit: %s rows of a source transaction half applied", got)
			}
		}))
		p := startPoller(t, db, broken)
		if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		polls, violations := p.finish(t)
		t.Logf("%d commits; the reader polled %d times", commits.Load(), polls)
		// On PostgreSQL and SQLite the unit of the third source
		// transaction adds the column to both tables.
		if inUnit := db.Dialect != "mysql"; (bothInUnit.Load() > 0) != inUnit {
			t.Errorf("%d units added the column to both tables, want some: %v", bothInUnit.Load(), inUnit)
		}
		if commits.Load() < txns-2 {
			t.Errorf("%d commits, want about one per source transaction", commits.Load())
		}
		if violations != 0 {
			t.Errorf("the reader saw %d rows of a source transaction half applied", violations)
		}
		if st := e.Stats(); st.Txns != txns {
			t.Errorf("%d source transactions committed, want %d", st.Txns, txns)
		}
		for _, tbl := range []string{"orders", "items"} {
			var want strings.Builder
			fmt.Fprintf(&want, "1|t%d|NULL", txns)
			for k := 2; k <= txns; k++ {
				x := "NULL"
				if k >= 3 {
					x = fmt.Sprintf("%s%d", tbl[:1], k)
				}
				fmt.Fprintf(&want, "\n%d|t%d|%s", k, k, x)
			}
			if got := query(t, db, "SELECT id, name, extra FROM "+db.Quote(tbl)+" ORDER BY id"); got != want.String() {
				t.Errorf("%s: got\n%s\nwant\n%s", tbl, got, want.String())
			}
		}
	})
}
