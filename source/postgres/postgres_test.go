package postgres_test

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/internal/pipelinetest"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
	"github.com/txsink/txsink/source/postgres"
)

// sourceTables are the source's tables: orders and their items, whose sum
// is the order's total in every committed transaction (the cross-table
// invariant a partial transaction breaks); events, append-only with no
// key, where a replayed transaction would show as a duplicate; kvfull and
// kvdef, whose keys move, under REPLICA IDENTITY FULL and DEFAULT; and
// docs, whose big value is TOASTed and left unchanged by updates.
const sourceTables = `
CREATE TABLE orders (id int PRIMARY KEY, customer text NOT NULL, total numeric(12,2) NOT NULL, paid boolean NOT NULL,
	at timestamptz NOT NULL, day date, meta jsonb, raw bytea, ratio double precision);
CREATE TABLE items (order_id int NOT NULL, n int NOT NULL, amount numeric(12,2) NOT NULL, PRIMARY KEY (order_id, n));
CREATE TABLE events (order_id int NOT NULL, kind text NOT NULL);
CREATE TABLE kvfull (id int PRIMARY KEY, v text);
ALTER TABLE kvfull REPLICA IDENTITY FULL;
CREATE TABLE kvdef (id int PRIMARY KEY, v text);
CREATE TABLE docs (id int PRIMARY KEY, title text NOT NULL, body text NOT NULL);
ALTER TABLE docs ALTER COLUMN body SET STORAGE EXTERNAL;
`

var published = []string{"public.orders", "public.items", "public.events", "public.kvfull", "public.kvdef", "public.docs"}

// targetTables are the same tables in each target dialect.
var targetTables = map[string][]string{
	"sqlite": {
		`CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT NOT NULL, total NUMERIC(12,2) NOT NULL, paid BOOLEAN NOT NULL, at TIMESTAMP NOT NULL, day DATE, meta JSON, raw BLOB, ratio DOUBLE)`,
		`CREATE TABLE items (order_id INTEGER NOT NULL, n INTEGER NOT NULL, amount NUMERIC(12,2) NOT NULL, PRIMARY KEY (order_id, n))`,
		`CREATE TABLE events (order_id INTEGER NOT NULL, kind TEXT NOT NULL)`,
		`CREATE TABLE kvfull (id INTEGER PRIMARY KEY, v TEXT)`,
		`CREATE TABLE kvdef (id INTEGER PRIMARY KEY, v TEXT)`,
		`CREATE TABLE docs (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT)`,
	},
	"mysql": {
		`CREATE TABLE orders (id INT PRIMARY KEY, customer VARCHAR(40) NOT NULL, total DECIMAL(12,2) NOT NULL, paid BOOLEAN NOT NULL, at DATETIME(6) NOT NULL, day DATE, meta JSON, raw VARBINARY(100), ratio DOUBLE)`,
		`CREATE TABLE items (order_id INT NOT NULL, n INT NOT NULL, amount DECIMAL(12,2) NOT NULL, PRIMARY KEY (order_id, n))`,
		`CREATE TABLE events (order_id INT NOT NULL, kind VARCHAR(20) NOT NULL)`,
		`CREATE TABLE kvfull (id INT PRIMARY KEY, v VARCHAR(40))`,
		`CREATE TABLE kvdef (id INT PRIMARY KEY, v VARCHAR(40))`,
		`CREATE TABLE docs (id INT PRIMARY KEY, title VARCHAR(40) NOT NULL, body MEDIUMTEXT)`,
	},
	"postgres": {
		`CREATE TABLE orders (id int PRIMARY KEY, customer text NOT NULL, total numeric(12,2) NOT NULL, paid boolean NOT NULL, at timestamptz NOT NULL, day date, meta jsonb, raw bytea, ratio double precision)`,
		`CREATE TABLE items (order_id int NOT NULL, n int NOT NULL, amount numeric(12,2) NOT NULL, PRIMARY KEY (order_id, n))`,
		`CREATE TABLE events (order_id int NOT NULL, kind text NOT NULL)`,
		`CREATE TABLE kvfull (id int PRIMARY KEY, v text)`,
		`CREATE TABLE kvdef (id int PRIMARY KEY, v text)`,
		`CREATE TABLE docs (id int PRIMARY KEY, title text NOT NULL, body text)`,
	},
}

// compared are the queries whose results must agree between source and
// target, row for row, rendered alike.
var compared = []string{
	"SELECT id, customer, total, CASE WHEN paid THEN 1 ELSE 0 END, at, day, meta, raw, ratio FROM orders ORDER BY id",
	"SELECT order_id, n, amount FROM items ORDER BY order_id, n",
	"SELECT order_id, kind, count(*) FROM events GROUP BY order_id, kind ORDER BY order_id, kind",
	"SELECT id, v FROM kvfull ORDER BY id",
	"SELECT id, v FROM kvdef ORDER BY id",
	"SELECT id, title, length(body), substr(body, 1, 40), substr(body, length(body) - 40, 40) FROM docs ORDER BY id",
}

// partial is the invariant check: orders whose items do not sum to their
// total, which only a partial transaction leaves in the target.
const partial = `SELECT count(*) FROM orders o WHERE abs(o.total - (SELECT coalesce(sum(amount), 0) FROM items i WHERE i.order_id = o.id)) > 0.001`

// workloadTx runs n multi-table transactions on the source, from seed:
// each creates, changes or deletes an order with its items and events,
// and moves or changes the keys of kvfull and kvdef, and updates docs'
// titles (their bodies stay TOASTed and unchanged).
func workloadTx(t *testing.T, src *sql.DB, first, n int, seed uint64, after func(i int)) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	for i := first; i < first+n; i++ {
		tx, err := src.Begin()
		if err != nil {
			t.Fatal(err)
		}
		exec := func(q string, args ...any) {
			if _, err := tx.Exec(q, args...); err != nil {
				t.Fatalf("transaction %d: %s: %v", i, q, err)
			}
		}
		id := r.IntN(i/2 + 1)
		switch r.IntN(4) {
		case 0, 1: // a new order, or a replaced one
			exec("DELETE FROM items WHERE order_id = $1", id)
			exec("DELETE FROM orders WHERE id = $1", id)
			items := 1 + r.IntN(4)
			total := 0
			for k := range items {
				amt := 100 + r.IntN(10000)
				total += amt
				exec("INSERT INTO items VALUES ($1, $2, $3::numeric / 100)", id, k, amt)
			}
			exec(`INSERT INTO orders VALUES ($1::int, $2, $3::numeric / 100, $4, timestamptz '2026-01-02 03:04:05.123456+02' + $1::int * interval '1 minute',
				date '2026-01-01' + $1::int, jsonb_build_object('n', $1::int, 'tags', jsonb_build_array('a', 'b')), convert_to('raw ' || $1::text, 'UTF8'), $1::int / 7.0)`,
				id, fmt.Sprintf("customer %d's", i), total, i%2 == 0)
		case 2: // a changed item, and the total with it
			exec("UPDATE items SET amount = amount + 0.01 WHERE order_id = $1 AND n = 0", id)
			exec("UPDATE orders SET total = total + 0.01 WHERE id = $1 AND EXISTS (SELECT 1 FROM items WHERE order_id = $1 AND n = 0)", id)
		case 3: // a deleted order
			exec("DELETE FROM items WHERE order_id = $1", id)
			exec("DELETE FROM orders WHERE id = $1", id)
		}
		exec("INSERT INTO events VALUES ($1, $2)", id, fmt.Sprint("tx", i%3))
		for _, kv := range []string{"kvfull", "kvdef"} {
			k := r.IntN(20)
			exec("INSERT INTO "+kv+" VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET v = excluded.v", k, fmt.Sprint("v", i))
			// Move a key: the old row's key comes as the old tuple.
			exec("UPDATE "+kv+" SET id = id + 100 WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM "+kv+" WHERE id = $1 + 100)", (k+7)%20)
			exec("DELETE FROM "+kv+" WHERE id >= 100 AND id % 3 = $1", i%3)
		}
		exec("UPDATE docs SET title = $1 WHERE id = $2", fmt.Sprint("title ", i), i%3)
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if after != nil {
			after(i)
		}
	}
}

// source returns a private PostgreSQL with the source tables, and docs'
// three rows with big bodies, TOASTed out of line.
func source(t *testing.T) *testdb.DB {
	t.Helper()
	src := testdb.PrivatePostgres(t)
	src.Exec(t, sourceTables)
	src.Exec(t, `INSERT INTO docs SELECT g, 'doc ' || g, (SELECT string_agg(md5(g::text || i::text), '') FROM generate_series(1, 1000) i) FROM generate_series(0, 2) g`)
	return src
}

// pipeline returns the pipeline streaming src into dst in transaction
// mode.
func pipeline(name string, src, dst *testdb.DB) *config.Config {
	cfg := config.Default()
	cfg.Name = name
	cfg.Source = config.Source{Type: postgres.Type, Format: postgres.Format}
	cfg.Source.Set("url", src.URL)
	cfg.Source.Set("tables", published)
	cfg.Source.Set("snapshot", postgres.SnapshotNever)
	cfg.Target.URL = dst.URL
	cfg.Tables = []config.Table{{Source: "public.events", AppendOnly: true}, {Source: "public.*"}}
	cfg.Sink.TxnEnabled = true
	return &cfg
}

// dump renders the compared queries' results.
func dump(t *testing.T, db *testdb.DB) string {
	t.Helper()
	return dumpOf(t, db, compared)
}

// dumpOf renders the results of queries, each ended by "--".
func dumpOf(t *testing.T, db *testdb.DB, queries []string) string {
	t.Helper()
	var b strings.Builder
	for _, q := range queries {
		if db.Dialect == "mysql" {
			q = strings.ReplaceAll(strings.ReplaceAll(q, "length(body)", "char_length(body)"), "substr(", "substring(")
		}
		rows, err := db.SQL.Query(q)
		if err != nil {
			t.Fatalf("%s: %s: %v", db.Dialect, q, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if i > 0 {
					b.WriteByte('|')
				}
				b.WriteString(render(v))
			}
			b.WriteByte('\n')
		}
		rows.Close()
		b.WriteString("--\n")
	}
	return b.String()
}

// render writes a value the same way whichever database returned it.
func render(v any) string {
	switch x := v.(type) {
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05.999999")
	case []byte:
		return workload.Normalize(string(x))
	case string:
		// SQLite's driver gives the text of a column whose declared type
		// it does not read as a time (TIMESTAMP(6), as txsink creates
		// it); Normalize would keep milliseconds only.
		if tm, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return tm.UTC().Format("2006-01-02 15:04:05.999999")
		}
	}
	return workload.Normalize(workload.Render(v))
}

// caughtUp waits until the target shows the source's rows, checking on
// every look that no partial transaction is visible.
func caughtUp(t *testing.T, r *pipelinetest.Run, src, dst *testdb.DB) {
	t.Helper()
	want := dump(t, src)
	r.Until(t, 2*time.Minute, "the target caught up with the source", func() (bool, string) {
		var n int
		if err := dst.SQL.QueryRow(partial).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			rows, _ := dst.SQL.Query(strings.Replace(partial, "count(*)", "o.id, o.total, (SELECT coalesce(sum(amount), 0) FROM items i WHERE i.order_id = o.id)", 1))
			var bad []string
			for rows.Next() {
				var id, a, b string
				rows.Scan(&id, &a, &b)
				bad = append(bad, id+": "+a+" vs "+b)
			}
			rows.Close()
			t.Fatalf("%d orders in the target do not match their items: a source transaction was applied in part: %v", n, bad)
		}
		got := dump(t, dst)
		return got == want, diff(want, got)
	})
}

// diff returns the first lines that differ.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\nwant %s\ngot  %s", i+1, a, b)
		}
	}
	return "(same)"
}

// slotLSN returns the slot's confirmed_flush_lsn as a number.
func slotLSN(t *testing.T, src *testdb.DB, slot string) int64 {
	t.Helper()
	var n int64
	if err := src.SQL.QueryRow("SELECT confirmed_flush_lsn - '0/0' FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// progress returns the target's stored position of the slot's partition.
func progress(t *testing.T, dst *testdb.DB, slot string) int64 {
	t.Helper()
	n, err := progressOf(dst, slot)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// progressOf is progress for a goroutine of its own (0 with no row yet).
func progressOf(dst *testdb.DB, slot string) (int64, error) {
	var n int64
	q := "SELECT position FROM txsink_progress WHERE source_partition = '" + postgres.Partition(slot) + "'"
	if err := dst.SQL.QueryRow(q).Scan(&n); err != nil && err != sql.ErrNoRows {
		if strings.Contains(err.Error(), "txsink_progress") {
			return 0, nil // not created yet
		}
		return 0, err
	}
	return n, nil
}

// TestStream streams multi-table transactions into each target in
// transaction mode, stopping the pipeline mid-stream and starting it
// again while the workload goes on: the target ends as the source, row for
// row (a replayed transaction would duplicate an event, a lost one leave a
// row behind), never shows part of a transaction, keeps TOASTed values
// the updates did not send, and the slot never confirms more than the
// target committed. With snapshot: initial the rows written before the
// slot existed come from the snapshot, the later ones from the stream;
// with never, the tables start empty (but docs, put in the target by hand).
func TestStream(t *testing.T) {
	src := source(t)
	for _, snapshot := range []string{postgres.SnapshotInitial, postgres.SnapshotNever} {
		for _, dialect := range testdb.Dialects {
			t.Run(snapshot+"/"+dialect, func(t *testing.T) {
				testStream(t, src, snapshot, dialect)
			})
		}
	}
}

func testStream(t *testing.T, src *testdb.DB, snapshot, dialect string) {
	dst := testdb.Open(t, dialect)
	dst.Exec(t, targetTables[dialect]...)
	cfg := pipeline("stream_"+snapshot+"_"+dialect, src, dst)
	cfg.Source.Set("snapshot", snapshot)
	slot := postgres.DefaultSlot(cfg.Name)
	// Each target starts from empty tables (but docs), before its slot
	// exists; the slot goes when the test ends, as the WAL it holds.
	src.Exec(t, "TRUNCATE orders, items, events, kvfull, kvdef")
	t.Cleanup(func() { src.SQL.Exec("SELECT pg_drop_replication_slot($1)", slot) })
	if snapshot == postgres.SnapshotNever {
		copyDocs(t, src, dst)
	} else {
		// Rows the snapshot copies.
		workloadTx(t, src.SQL, 0, 100, 9, nil)
	}

	r := pipelinetest.Start(t, cfg)
	var watch sync.WaitGroup
	stopWatch := make(chan struct{})
	stopOnce := sync.OnceFunc(func() { close(stopWatch); watch.Wait() })
	t.Cleanup(stopOnce)
	watch.Add(1)
	go func() {
		// The slot's confirmed position, read first, is never beyond
		// the target's committed one, read after.
		defer watch.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		created := int64(-1)
		for {
			select {
			case <-stopWatch:
				return
			case <-tick.C:
			}
			var c int64
			if err := src.SQL.QueryRow("SELECT coalesce(confirmed_flush_lsn - '0/0', -1) FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&c); err != nil {
				continue // the slot is not there yet
			}
			if created < 0 {
				created = c
			}
			p, err := progressOf(dst, slot)
			if err != nil {
				t.Errorf("read the target's progress: %v", err)
				return
			}
			if c != created && c > p {
				t.Errorf("the slot confirmed %d, beyond the target's committed position %d", c, p)
				return
			}
		}
	}()
	if snapshot == postgres.SnapshotNever {
		// Only what the slot sees is streamed: the workload waits for it.
		// With the snapshot it does not: transactions racing the slot's
		// creation and the copy are in the one or the other, never in
		// both (events would show it) nor in neither.
		waitSlot(t, src, slot)
	}
	// Stops mid-stream, while the workload goes on: the pipeline is
	// cancelled (SIGINT) with transactions in flight, and started again
	// from the target's progress. The first stop waits for the
	// snapshot's commit: a stop before it is refused (see TestSnapshotUnfinished).
	restart := func(i int) {
		if i%100 == 50 {
			waitProgress(t, dst, slot)
			r.Stop(t)
		}
		if i%100 == 70 {
			r = pipelinetest.Start(t, cfg)
		}
	}
	workloadTx(t, src.SQL, 100, 450, 1, restart)
	caughtUp(t, r, src, dst)
	r.Stop(t)
	stopOnce()
	if c, p := slotLSN(t, src, slot), progress(t, dst, slot); c != p {
		t.Errorf("after the stop the slot confirmed %d, the target holds %d: the last commit was not confirmed", c, p)
	}
	// A run with nothing new applies nothing twice.
	r = pipelinetest.Start(t, cfg)
	caughtUp(t, r, src, dst)
	r.Stop(t)
}

// copyDocs puts the source's docs rows into the target, as a snapshot
// would.
func copyDocs(t *testing.T, src, dst *testdb.DB) {
	t.Helper()
	var docs []string
	rows, err := src.SQL.Query("SELECT id, title, body FROM docs ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int
		var title, body string
		if err := rows.Scan(&id, &title, &body); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, fmt.Sprintf("(%d, '%s', '%s')", id, title, body))
	}
	dst.Exec(t, "INSERT INTO docs (id, title, body) VALUES "+strings.Join(docs, ", "))
}

// waitProgress waits until the target committed a position of the slot.
func waitProgress(t *testing.T, dst *testdb.DB, slot string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for progress(t, dst, slot) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the target committed nothing of slot %s within a minute", slot)
		}
		<-tick.C
	}
}

// TestSnapshotSlotWithoutProgress starts with snapshot: initial from a
// slot that exists while the target holds no position of it (a snapshot
// stopped before its first chunk committed): the copy is taken anew, as
// of a new consistent point, and the changes the slot holds from before
// it are skipped, none applied twice (events would show it).
func TestSnapshotSlotWithoutProgress(t *testing.T) {
	src, dst, cfg, slot := sqlitePipeline(t, "unfinished")
	src.Exec(t, "SELECT pg_create_logical_replication_slot('"+slot+"', 'pgoutput')")
	workloadTx(t, src.SQL, 0, 30, 5, nil)
	cfg.Source.Set("snapshot", postgres.SnapshotInitial)
	r := pipelinetest.Start(t, cfg)
	waitSlot(t, src, slot)
	workloadTx(t, src.SQL, 30, 20, 6, nil)
	waitProgress(t, dst, slot)
	caughtUp(t, r, src, dst)
}

// sqlitePipeline returns a private source, a SQLite target with the
// tables, and the pipeline named name between them, with its slot.
func sqlitePipeline(t *testing.T, name string) (src, dst *testdb.DB, cfg *config.Config, slot string) {
	t.Helper()
	src = source(t)
	dst = testdb.SQLite(t)
	dst.Exec(t, targetTables["sqlite"]...)
	cfg = pipeline(name, src, dst)
	return src, dst, cfg, postgres.DefaultSlot(cfg.Name)
}

// waitSlot waits until the pipeline created its slot, so that the
// workload that follows is streamed.
func waitSlot(t *testing.T, src *testdb.DB, slot string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		var n int
		if err := src.SQL.QueryRow("SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1 AND active", slot).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			return
		}
		<-tick.C
	}
	t.Fatalf("the pipeline did not start streaming from slot %s within a minute", slot)
}

// TestTruncateRefused stops the pipeline at a TRUNCATE of a published
// table, naming it; nothing after it is applied.
func TestTruncateRefused(t *testing.T) {
	src, dst, cfg, slot := sqlitePipeline(t, "truncate")
	r := pipelinetest.Start(t, cfg)
	waitSlot(t, src, slot)
	src.Exec(t, "INSERT INTO kvdef VALUES (1, 'a')", "TRUNCATE kvdef", "INSERT INTO kvdef VALUES (2, 'b')")
	err := r.Wait()
	if err == nil || !strings.Contains(err.Error(), "TRUNCATE of public.kvdef") || !strings.Contains(err.Error(), "source.truncate: delete-all") {
		t.Fatalf("Run = %v, want the refusal of the TRUNCATE of public.kvdef, naming source.truncate: delete-all", err)
	}
	if got := dump(t, dst); strings.Contains(got, "2|b") {
		t.Errorf("the insert after the TRUNCATE is in the target:\n%s", got)
	}
}

// TestSourceUnreachableAtStart runs a pipeline whose source database does
// not answer (its port has no server): Run waits up to startup-timeout,
// then stops with an error naming the source database's address and what
// to check.
func TestSourceUnreachableAtStart(t *testing.T) {
	dst := testdb.SQLite(t)
	dst.Exec(t, targetTables["sqlite"]...)
	addr := fmt.Sprintf("127.0.0.1:%d", testdb.FreePort(t))
	cfg := pipeline("unreachable", &testdb.DB{URL: "postgres://postgres@" + addr + "/test?sslmode=disable"}, dst)
	cfg.StartupTimeout = 100 * time.Millisecond
	err := pipelinetest.Start(t, cfg).Wait()
	for _, want := range []string{"the source database did not answer within startup-timeout (100ms", addr, "pg_hba.conf"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Run = %v, want an error holding %q", err, want)
		}
	}
}
