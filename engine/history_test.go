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
)

// historyDDL is a history table's definition on dialect: the source's
// columns, NULL-able (a delete carries only the key), and txsink's five;
// with surrogate, first a key of its own the database fills.
func historyDDL(dialect, name string, surrogate ...bool) string {
	readAt := map[string]string{"mysql": "DATETIME(6)", "postgres": "TIMESTAMP(6)", "sqlite": "TIMESTAMP"}[dialect]
	key := ""
	if len(surrogate) > 0 && surrogate[0] {
		key = map[string]string{"mysql": "hid BIGINT AUTO_INCREMENT PRIMARY KEY, ", "postgres": "hid BIGSERIAL PRIMARY KEY, ",
			"sqlite": "hid INTEGER PRIMARY KEY, "}[dialect]
	}
	return `CREATE TABLE ` + name + ` (` + key + `id INT NULL, val VARCHAR(10) NULL, __op VARCHAR(1) NOT NULL,
		__source_partition VARCHAR(255) NOT NULL, __source_offset BIGINT NOT NULL, __txn_id VARCHAR(255) NULL,
		__read_at ` + readAt + ` NOT NULL)`
}

// historyLines is TestHistoryRows' changelog: key 1 inserted, updated
// twice and deleted (by its key alone), key 2 inserted and updated; in
// transaction mode every two changes are one source transaction.
func historyLines(txn bool) []string {
	ops := []struct{ op, row string }{
		{"+I", `{"id":1,"val":"a"}`}, {"+U", `{"id":1,"val":"b"}`}, {"+U", `{"id":1,"val":"c"}`},
		{"-D", `{"id":1}`}, {"+I", `{"id":2,"val":"x"}`}, {"+U", `{"id":2,"val":"y"}`},
	}
	lines := make([]string, len(ops))
	for i, o := range ops {
		lines[i] = fmt.Sprintf(`{"op":%q,"table":"s.h","row":%s`, o.op, o.row)
		if txn {
			end := ""
			if i%2 == 1 {
				end = `,"txn_end":true`
			}
			lines[i] += fmt.Sprintf(`,"txn":"t%d"%s`, i/2, end)
		}
		lines[i] += "}"
	}
	return lines
}

// wantHistory renders the history rows lines make in a file at path, as
// "id|val|op|partition|offset|txn" ordered by offset.
func wantHistory(lines []string, path string, txn bool) string {
	vals := []string{"1|a|I", "1|b|U", "1|c|U", "1|NULL|D", "2|x|I", "2|y|U"}
	var b strings.Builder
	off := 0
	for i, l := range lines {
		off += len(l) + 1
		id := "NULL"
		if txn {
			id = fmt.Sprintf("t%d", i/2)
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s|%s|%d|%s", vals[i], path, off, id)
	}
	return b.String()
}

// TestHistoryRows is issue 27's test of mode: history: a source table
// routed to an upsert table and two history tables (one with a key of
// its own the database fills), plain and transaction mode, on every
// server. The upsert table holds the final
// state; each history table holds one row per change, in order, with
// its kind, position and transaction. A run that crashes before a
// commit, one stopped after a commit and one whose COMMIT answer is lost
// are each followed by a run to the end: no history row is missing or
// there twice.
func TestHistoryRows(t *testing.T) {
	for _, txn := range []bool{false, true} {
		mode := map[bool]string{false: "plain", true: "txn"}[txn]
		t.Run(mode, func(t *testing.T) {
			forEachDialect(t, func(t *testing.T, db *testdb.DB) {
				lines := historyLines(txn)
				path := filepath.Join(t.TempDir(), "in.jsonl")
				if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				want := wantHistory(lines, path, txn)
				for _, stop := range []string{"none", "crash", "interrupt", "lost-ack"} {
					t.Run(stop, func(t *testing.T) {
						db.Exec(t, `DROP TABLE IF EXISTS h_up`, `DROP TABLE IF EXISTS h_hist`, `DROP TABLE IF EXISTS h_audit`,
							`CREATE TABLE h_up (id INT NOT NULL PRIMARY KEY, val VARCHAR(10) NOT NULL)`,
							historyDDL(db.Dialect, "h_hist"), historyDDL(db.Dialect, "h_audit", true))
						cfg := pipeline(db, config.Table{Source: "s.h", Target: "h_hist", Mode: config.ModeHistory},
							config.Table{Source: "s.h", Target: "h_up"},
							config.Table{Source: "s.*", Target: "h_audit", Mode: config.ModeHistory})
						if txn {
							cfg = txnPipeline(cfg)
						}
						cfg.Name = "history-" + stop
						cfg.Sink.FlushMaxRows = 2
						cfg.Sink.FlushCoalesce = false
						cfg.Source.Set("paths", []string{path})
						runHistory(t, cfg, stop)
						if got := query(t, db, "SELECT id, val FROM h_up ORDER BY id"); got != "2|y" {
							t.Errorf("h_up:\n%s\nwant 2|y", got)
						}
						for _, h := range []string{"h_hist", "h_audit"} {
							got := query(t, db, "SELECT id, val, __op, __source_partition, __source_offset, __txn_id FROM "+h+" ORDER BY __source_offset")
							if got != want {
								t.Errorf("%s:\n%s\nwant:\n%s", h, got, want)
							}
							if n := query(t, db, "SELECT COUNT(*) FROM "+h+" WHERE __read_at IS NULL"); n != "0" {
								t.Errorf("%s: %s rows without __read_at", h, n)
							}
						}
					})
				}
			})
		})
	}
}

// runHistory runs cfg to the end, first stopped as stop says: "crash"
// fails the second commit before it lands, "interrupt" cancels the run
// after its second commit, "lost-ack" loses the answer of every second
// COMMIT (which landed), "none" stops nothing.
func runHistory(t *testing.T, cfg *config.Config, stop string) {
	t.Helper()
	commits := 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var opts []engine.Option
	switch stop {
	case "crash":
		opts = append(opts, engine.WithBeforeCommitHook(func(*commit.Unit) error {
			if commits++; commits == 2 {
				return errCrash
			}
			return nil
		}))
	case "interrupt":
		opts = append(opts, engine.WithCommitHook(func(*commit.Unit) {
			if commits++; commits == 2 {
				cancel()
			}
		}))
	case "lost-ack":
		opts = append(opts, engine.WithLostCommitAck(func(*commit.Unit) bool {
			commits++
			return commits%2 == 0
		}))
	}
	e := newEngine(t, cfg, opts...)
	err := e.Run(ctx, engine.RunOptions{})
	switch {
	case stop == "crash" && !errors.Is(err, errCrash):
		t.Fatalf("first run: %v, want the simulated crash", err)
	case stop != "crash" && err != nil:
		t.Fatalf("first run: %v", err)
	case stop == "lost-ack" && e.Stats().Retries == 0:
		t.Fatal("no lost answer was simulated")
	}
	e.Close()
	if stop == "none" || stop == "lost-ack" {
		return
	}
	e = newEngine(t, cfg)
	if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
		t.Fatalf("second run: %v", err)
	}
}

// TestHistoryReadAt feeds changes through Add at a fake clock's times,
// on every server: __read_at is the time each change was read, cut to
// the column's digits, and a source column named like one of txsink's
// own is refused at its change, naming it.
func TestHistoryReadAt(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, historyDDL(db.Dialect, "hr"))
		cfg := pipeline(db, config.Table{Source: "s.hr", Mode: config.ModeHistory})
		at := time.Date(2026, 12, 4, 10, 20, 30, 123456789, time.UTC)
		clk := clocktest.New(at)
		e := newEngine(t, cfg, engine.WithClock(clk))
		f := &feeder{t: t, e: e}
		f.must(changelog.Insert, "s.hr", changelog.Row{}, row("id", changelog.Number("1"), "val", "a"))
		clk.Advance(time.Second)
		f.must(changelog.Delete, "s.hr", row("id", changelog.Number("1"), "val", "a"), changelog.Row{})
		f.flush()
		got := query(t, db, "SELECT id, val, __op, __source_offset, "+castText(db.Dialect, "__read_at")+" FROM hr ORDER BY __source_offset")
		// The clock's nanoseconds are more digits than the column keeps,
		// which a value from the changelog would be refused for: txsink's
		// own time is cut. (query renders times to the millisecond.)
		want := "1|a|I|100|2026-12-04 10:20:30.123\n1|a|D|200|2026-12-04 10:20:31.123"
		if !sameTimes(got, want) {
			t.Errorf("hr:\n%s\nwant:\n%s", got, want)
		}
		err := f.add(changelog.Insert, "s.hr", changelog.Row{}, row("id", changelog.Number("2"), "__op", "x"))
		if err == nil || !strings.Contains(err.Error(), "column __op") || !strings.Contains(err.Error(), "fills itself") {
			t.Errorf("a source column __op: %v, want it refused, named", err)
		}
	})
}

// TestHistoryRefusals checks what start-up refuses: a history table
// without txsink's columns (each named), and, at configuration, the keys
// that mean nothing for a history table and a StarRocks target.
func TestHistoryRefusals(t *testing.T) {
	db := testdb.SQLite(t)
	db.Exec(t, `CREATE TABLE hx (id INT, val TEXT, __op TEXT)`)
	cfg := pipeline(db, config.Table{Source: "s.hx", Mode: config.ModeHistory})
	_, err := engine.New(context.Background(), cfg)
	for _, want := range []string{"tables[0] (s.hx)", "lacks column __source_partition", "lacks column __read_at", "mode: history"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("engine.New: %v, want it to say %q", err, want)
		}
	}
	bad := []struct {
		tc   config.Table
		want string
	}{
		{config.Table{Source: "s.a", Target: "a", Mode: config.ModeHistory, PrimaryKey: []string{"id"}}, "tables[0].primary-key"},
		{config.Table{Source: "s.a", Target: "a", Mode: config.ModeHistory, AppendOnly: true}, "tables[0].append-only"},
		{config.Table{Source: "s.a", Target: "a", Mode: config.ModeHistory, VersionColumn: "v"}, "tables[0].version-column"},
		{config.Table{Source: "s.a", Target: "a", Mode: config.ModeHistory, Delete: "ignore"}, "tables[0].delete"},
		{config.Table{Source: "s.a", Target: "a", Mode: "audit"}, "tables[0].mode"},
	}
	for _, b := range bad {
		c := pipeline(db, b.tc)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: %v, want %s refused", b.tc, err, b.want)
		}
	}
	c := pipeline(db, config.Table{Source: "s.a", Target: "a"}, config.Table{Source: "s.a", Target: "a", Mode: config.ModeHistory})
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "tables[1].target") {
		t.Errorf("a history entry with its upsert entry's target: %v, want it refused", err)
	}
	c = pipeline(db, config.Table{Source: "s.a", Target: "a_hist", Mode: config.ModeHistory})
	c.Target.URL = "starrocks://root@127.0.0.1:8030/db?query-port=9030"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "StarRocks") {
		t.Errorf("mode: history on StarRocks: %v, want it refused", err)
	}
}

// TestStarRocksRefusesHistory: a history entry is refused at start on
// StarRocks, even for a Duplicate Key table that has the columns, and
// for a configuration built in Go that was never validated.
func TestStarRocksRefusesHistory(t *testing.T) {
	_, db := starrocksFake(t, `CREATE TABLE events_hist (id BIGINT, __op VARCHAR(1), __source_partition VARCHAR(255), __source_offset BIGINT, `+
		`__txn_id VARCHAR(255), __read_at DATETIME) DUPLICATE KEY (id) DISTRIBUTED BY HASH(id)`)
	cfg := pipeline(db, config.Table{Source: "shop.events", Target: "events_hist", Mode: config.ModeHistory})
	cfg.Name = "starrocks-history"
	cfg.Source.Set("paths", []string{writeLines(t, t.TempDir(), "e.jsonl", nil)})
	_, err := engine.New(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "tables[0] (shop.events)") || !strings.Contains(err.Error(), "not written to StarRocks") {
		t.Fatalf("engine.New: %v, want the history entry refused", err)
	}
}

// TestHistoryCreate creates a missing history table under schema.create:
// missing, on every server, from Debezium's declaration: no key, every
// source column NULL-able, txsink's five columns; a second run adds no
// row.
func TestHistoryCreate(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		cfg := creatingPipeline(t, db, "debezium-json", []string{"id"}, []string{
			dbzEnvelope(true, "orders", "c", "null", dbzRow(1, "ab", 1250)),
			dbzEnvelope(true, "orders", "c", "null", dbzRow(2, "cd", 99)),
			dbzEnvelope(true, "orders", "u", dbzRow(1, "ab", 1250), dbzRow(1, "ef", 1300)),
			dbzEnvelope(true, "orders", "d", dbzRow(2, "cd", 99), "null"),
		})
		cfg.Tables = append(cfg.Tables, config.Table{Source: "inventory.orders", Target: "orders_hist", Mode: config.ModeHistory})
		for run := 1; run <= 2; run++ {
			if err := runOnce(t, cfg); err != nil {
				t.Fatalf("run %d: %v", run, err)
			}
			got := query(t, db, "SELECT id, name, price, __op FROM orders_hist ORDER BY __source_offset")
			if want := "1|ab|12.5|I\n2|cd|0.99|I\n1|ef|13|U\n2|cd|0.99|D"; got != want {
				t.Errorf("run %d: orders_hist:\n%s\nwant:\n%s", run, got, want)
			}
		}
		st, err := tableOf(t, db, "orders_hist")
		if err != nil {
			t.Fatal(err)
		}
		if len(st.PrimaryKey) != 0 {
			t.Errorf("primary key %v, want none", st.PrimaryKey)
		}
		var names []string
		for _, c := range st.Columns {
			names = append(names, c.Name)
			if c.Nullable != (c.Name == "__txn_id" || !strings.HasPrefix(c.Name, "__")) {
				t.Errorf("column %s: nullable %v", c.Name, c.Nullable)
			}
		}
		if got, want := strings.Join(names, ","), "id,name,price,seen,doc,__op,__source_partition,__source_offset,__txn_id,__read_at"; got != want {
			t.Errorf("columns %s, want %s", got, want)
		}
	})
}

// TestHistoryAddColumns: a column the source adds reaches the upsert
// table and the history table, both created by schema.create: missing
// and altered by schema.evolve: add-columns, on every server; the rows
// before it hold NULL there.
func TestHistoryAddColumns(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		cfg := creatingPipeline(t, db, "debezium-json", []string{"id"}, []string{
			dbzVersioned(false, "c", "null", `{"id":1,"name":"a"}`),
			dbzVersioned(true, "c", "null", `{"id":2,"name":"b","extra":"x"}`),
			dbzVersioned(true, "u", `{"id":1,"name":"a","extra":null}`, `{"id":1,"name":"a","extra":"y"}`),
		})
		cfg.Tables = append(cfg.Tables, config.Table{Source: "inventory.orders", Target: "orders_hist", Mode: config.ModeHistory})
		cfg.Schema.Evolve = []string{config.SchemaEvolveAddColumns}
		if err := runOnce(t, cfg); err != nil {
			t.Fatal(err)
		}
		if got, want := query(t, db, "SELECT id, name, extra FROM orders ORDER BY id"), "1|a|y\n2|b|x"; got != want {
			t.Errorf("orders:\n%s\nwant:\n%s", got, want)
		}
		if got, want := query(t, db, "SELECT id, name, extra, __op FROM orders_hist ORDER BY __source_offset"), "1|a|NULL|I\n2|b|x|I\n1|a|y|U"; got != want {
			t.Errorf("orders_hist:\n%s\nwant:\n%s", got, want)
		}
	})
}
