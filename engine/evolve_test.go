package engine_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
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
		cfg.Schema.Evolve = config.SchemaEvolveAddColumns

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

// TestAddColumnsGoesOn streams a changelog whose source adds a column
// and then goes on writing it, one change per unit: the run starts again
// from its last commit once, when it meets the column (what it had
// buffered was converted for the table's old shape), and never after
// the column is added, on every server: on PostgreSQL and SQLite the
// units after the one that added the column go on with the table as
// planned.
func TestAddColumnsGoesOn(t *testing.T) {
	lines := evolvingLines()
	for i := 3; i <= 8; i++ {
		lines = append(lines, dbzVersioned(true, "c", "null", fmt.Sprintf(`{"id":%d,"name":"n","extra":"e%d"}`, i, i)))
	}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		cfg := creatingPipeline(t, db, "debezium-json", []string{"id"}, lines)
		cfg.Schema.Evolve = config.SchemaEvolveAddColumns
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
		if commits < len(lines)-1 {
			t.Errorf("%d commits, want one per change after the first", commits)
		}
		want := "1|a|y\n2|b|x\n3|n|e3\n4|n|e4\n5|n|e5\n6|n|e6\n7|n|e7\n8|n|e8"
		if got := query(t, db, "SELECT id, name, extra FROM "+db.Quote("orders")+" ORDER BY id"); got != want {
			t.Errorf("got\n%s\nwant\n%s", got, want)
		}
	})
}
