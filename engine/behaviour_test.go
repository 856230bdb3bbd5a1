package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/clock/clocktest"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/sink/sinktest"
)

// pipeline returns a config for db with the given tables entries.
func pipeline(db *testdb.DB, tables ...config.Table) *config.Config {
	cfg := config.Default()
	cfg.Name = "behaviour"
	cfg.Source = config.Source{Type: "file", Format: "txsink-json"}
	cfg.Target.URL = db.URL
	cfg.Tables = tables
	cfg.Sink.FlushInterval = 0
	return &cfg
}

func newEngine(t *testing.T, cfg *config.Config, opts ...engine.Option) *engine.Engine {
	t.Helper()
	e, err := engine.New(context.Background(), cfg, opts...)
	if err != nil {
		t.Fatalf("engine.New: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

var row = changelog.RowOf

type feeder struct {
	t   *testing.T
	e   *engine.Engine
	seq int64
}

func (f *feeder) add(kind changelog.Kind, table string, before, after changelog.Row) error {
	return f.addChange(change(kind, table, before, after))
}

// addChange adds c at the feeder's next position (offset 100 × its
// number), its own position and size replaced.
func (f *feeder) addChange(c changelog.Change) error {
	f.seq++
	c.Pos, c.Size = changelog.Position{Partition: "p0", Offset: f.seq * 100, Seq: f.seq}, 100
	return f.e.Add(context.Background(), &c)
}

func (f *feeder) must(kind changelog.Kind, table string, before, after changelog.Row) {
	f.t.Helper()
	f.mustChange(change(kind, table, before, after))
}

func (f *feeder) mustChange(c changelog.Change) {
	f.t.Helper()
	if err := f.addChange(c); err != nil {
		f.t.Fatal(err)
	}
}

func (f *feeder) flush() {
	f.t.Helper()
	if err := f.e.Flush(context.Background()); err != nil {
		f.t.Fatal(err)
	}
}

// query returns the rows of a query rendered as "a|b" lines, values
// normalized across servers.
func query(t *testing.T, db *testdb.DB, q string) string {
	t.Helper()
	return sinktest.Rows(t, db.SQL, q)
}

func forEachDialect(t *testing.T, f func(t *testing.T, db *testdb.DB)) {
	for _, d := range testdb.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f(t, testdb.Open(t, d))
		})
	}
}

// TestSeedSemantics runs seed 000's order 1001 and the rules txsink adds
// (key changes, composite keys, lone -U) on every server.
func TestSeedSemantics(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t,
			`CREATE TABLE orders_rt (id INT NOT NULL PRIMARY KEY, amount DECIMAL(10,2) NOT NULL, status VARCHAR(16) NOT NULL)`,
			`CREATE TABLE tenant_orders (tenant_id INT NOT NULL, order_id INT NOT NULL, note VARCHAR(20), PRIMARY KEY (tenant_id, order_id))`)
		cfg := pipeline(db, config.Table{Source: "shop.orders", Target: "orders_rt"}, config.Table{Source: "shop.tenant_orders", PrimaryKey: []string{"tenant_id", "order_id"}})
		f := &feeder{t: t, e: newEngine(t, cfg)}
		o := func(id int, amount, status string) changelog.Row {
			return row("id", changelog.Number(fmt.Sprint(id)), "amount", changelog.Number(amount), "status", status)
		}
		// One flush: +I, +U, -D of 1001 leave nothing; 1002 is inserted and
		// updated; 1003 gets a -D/+I pair; 1004 moves to key 1005.
		f.must(changelog.Insert, "shop.orders", changelog.Row{}, o(1001, "80.00", "CREATED"))
		f.must(changelog.UpdateAfter, "shop.orders", o(1001, "80.00", "CREATED"), o(1001, "100.00", "PAID"))
		f.must(changelog.Delete, "shop.orders", o(1001, "100.00", "PAID"), changelog.Row{})
		f.must(changelog.Insert, "shop.orders", changelog.Row{}, o(1002, "5.00", "CREATED"))
		f.must(changelog.UpdateBefore, "shop.orders", o(1002, "5.00", "CREATED"), changelog.Row{})
		f.must(changelog.UpdateAfter, "shop.orders", changelog.Row{}, o(1002, "6.50", "PAID"))
		f.must(changelog.Insert, "shop.orders", changelog.Row{}, o(1003, "1.00", "CREATED"))
		f.must(changelog.Insert, "shop.orders", changelog.Row{}, o(1004, "2.00", "CREATED"))
		f.flush()
		f.must(changelog.Delete, "shop.orders", o(1003, "1.00", "CREATED"), changelog.Row{})
		f.must(changelog.Insert, "shop.orders", changelog.Row{}, o(1003, "1.50", "CREATED"))
		f.must(changelog.UpdateAfter, "shop.orders", o(1004, "2.00", "CREATED"), o(1005, "2.00", "MOVED"))
		f.flush()
		// A lone -U at a flush boundary deletes nothing.
		f.must(changelog.UpdateBefore, "shop.orders", o(1002, "6.50", "PAID"), changelog.Row{})
		f.flush()
		if got, want := query(t, db, "SELECT id, amount, status FROM orders_rt ORDER BY id"), "1002|6.5|PAID\n1003|1.5|CREATED\n1005|2|MOVED"; got != want {
			t.Errorf("orders_rt:\n%s\nwant\n%s", got, want)
		}
		// Composite keys: each key column takes part.
		k := func(tenant, order int, note any) changelog.Row {
			return row("tenant_id", changelog.Number(fmt.Sprint(tenant)), "order_id", changelog.Number(fmt.Sprint(order)), "note", note)
		}
		f.must(changelog.Insert, "shop.tenant_orders", changelog.Row{}, k(1, 7, "a"))
		f.must(changelog.Insert, "shop.tenant_orders", changelog.Row{}, k(2, 7, "b"))
		f.must(changelog.Insert, "shop.tenant_orders", changelog.Row{}, k(2, 8, nil))
		f.flush()
		f.must(changelog.Delete, "shop.tenant_orders", k(2, 7, nil), changelog.Row{})
		f.must(changelog.UpdateAfter, "shop.tenant_orders", changelog.Row{}, k(1, 7, "a2"))
		f.flush()
		if got, want := query(t, db, "SELECT tenant_id, order_id, note FROM tenant_orders ORDER BY tenant_id, order_id"), "1|7|a2\n2|8|NULL"; got != want {
			t.Errorf("tenant_orders:\n%s\nwant\n%s", got, want)
		}
		if got, want := query(t, db, "SELECT source_partition, position, seq FROM txsink_progress WHERE pipeline = 'behaviour'"), "p0|1700|17"; got != want {
			t.Errorf("progress = %q, want %q", got, want)
		}
	})
}

// TestStartupRefusals checks the start-up errors of seed 000 §3 and §15.
func TestStartupRefusals(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t,
			`CREATE TABLE keyed (a INT NOT NULL, b INT NOT NULL, v INT, PRIMARY KEY (a, b))`,
			`CREATE TABLE keyless (a INT, v INT)`)
		tests := []struct {
			name  string
			table config.Table
			want  string
		}{
			{"key mismatch", config.Table{Source: "s.keyed", PrimaryKey: []string{"a"}}, "differs from the target's PRIMARY KEY"},
			{"no key, not append-only", config.Table{Source: "s.keyless"}, "append-only: true"},
			{"missing table", config.Table{Source: "s.nope"}, "does not exist"},
		}
		for _, tc := range tests {
			cfg := pipeline(db, tc.table)
			if err := engine.Check(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: Check err = %v, want %q", tc.name, err, tc.want)
			}
			if _, err := engine.New(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: New err = %v, want %q", tc.name, err, tc.want)
			}
		}
		ok := pipeline(db, config.Table{Source: "s.keyed", PrimaryKey: []string{"a", "b"}}, config.Table{Source: "s.keyless", AppendOnly: true})
		if err := engine.Check(context.Background(), ok); err != nil {
			t.Errorf("Check of a good config: %v", err)
		}
	})
}

// TestUnknownTables: an unknown table stops the pipeline by default and is
// skipped (progress still moving) with skip-unknown-tables.
func TestUnknownTables(t *testing.T) {
	db := testdb.SQLite(t)
	db.Exec(t, `CREATE TABLE t (id INT PRIMARY KEY)`)
	cfg := pipeline(db, config.Table{Source: "s.t"})
	f := &feeder{t: t, e: newEngine(t, cfg)}
	err := f.add(changelog.Insert, "s.other", changelog.Row{}, row("id", changelog.Number("1")))
	if err == nil || !strings.Contains(err.Error(), "unknown table") || !strings.Contains(err.Error(), "s.other") {
		t.Fatalf("err = %v, want unknown table s.other", err)
	}
	cfg.SkipUnknownTables = true
	f = &feeder{t: t, e: newEngine(t, cfg)}
	f.must(changelog.Insert, "s.other", changelog.Row{}, row("id", changelog.Number("1")))
	f.must(changelog.Insert, "s.t", changelog.Row{}, row("id", changelog.Number("1")))
	f.flush()
	if got := query(t, db, "SELECT seq FROM txsink_progress"); got != "2" {
		t.Errorf("progress seq = %s, want 2", got)
	}
	if st := f.e.Stats(); st.Skipped != 1 {
		t.Errorf("Skipped = %d, want 1", st.Skipped)
	}
}

// TestIntervalFlushUsesTheClock drives the interval trigger with a fake
// clock: nothing is committed before the interval, everything after it.
func TestIntervalFlushUsesTheClock(t *testing.T) {
	db := testdb.SQLite(t)
	db.Exec(t, `CREATE TABLE t (id INT PRIMARY KEY)`)
	cfg := pipeline(db, config.Table{Source: "s.t"})
	cfg.Sink.FlushInterval = time.Second
	clock := clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var commits []*commit.Unit
	f := &feeder{t: t, e: newEngine(t, cfg, engine.WithClock(clock), engine.WithCommitHook(func(u *commit.Unit) { commits = append(commits, u) }))}
	f.must(changelog.Insert, "s.t", changelog.Row{}, row("id", changelog.Number("1")))
	clock.Advance(999 * time.Millisecond)
	if err := f.e.MaybeFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(commits) != 0 {
		t.Fatalf("committed before the interval")
	}
	if want := clock.Now().Add(time.Millisecond); !f.e.NextFlush().Equal(want) {
		t.Errorf("NextFlush = %v, want %v", f.e.NextFlush(), want)
	}
	clock.Advance(time.Millisecond)
	if err := f.e.MaybeFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(commits) != 1 {
		t.Fatalf("commits = %d after the interval, want 1", len(commits))
	}
}

// TestCheckWritesNothing: check creates no progress table and no SQLite
// file.
func TestCheckWritesNothing(t *testing.T) {
	db := testdb.SQLite(t)
	db.Exec(t, `CREATE TABLE t (id INT PRIMARY KEY)`)
	if err := engine.Check(context.Background(), pipeline(db, config.Table{Source: "s.t"})); err != nil {
		t.Fatal(err)
	}
	if got := query(t, db, "SELECT COUNT(*) FROM sqlite_schema WHERE name = 'txsink_progress'"); got != "0" {
		t.Errorf("check created the progress table")
	}
	missing := filepath.Join(t.TempDir(), "missing.db")
	cfg := pipeline(db, config.Table{Source: "s.t"})
	cfg.Target.URL = "sqlite://" + missing
	if err := engine.Check(context.Background(), cfg); err == nil {
		t.Errorf("check of a missing SQLite file succeeded")
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("check created %s (stat: %v)", missing, err)
	}
}
