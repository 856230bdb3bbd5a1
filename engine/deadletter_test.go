package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/sink"
)

// TestDeadLetterPlain quarantines each bad record — one that cannot be
// decoded, one with a value its column cannot hold, one of an unknown
// table — and applies every good one, on every server.
func TestDeadLetterPlain(t *testing.T) {
	lines := []string{
		`{"op":"+I","table":"s.items","row":{"id":1,"name":"ok-1"}}`,
		`{"op":"+I","table":"s.items","row":{"id":2,"name":"ok-2"`, // cut short
		`{"op":"+I","table":"s.items","row":{"id":3,"name":"far too long for the column"}}`,
		`{"op":"+I","table":"s.nowhere","row":{"id":4}}`,
		`{"op":"+U","table":"s.items","row":{"id":1,"name":"ok-1b"}}`,
	}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, `CREATE TABLE items (id INT NOT NULL PRIMARY KEY, name VARCHAR(10) NOT NULL)`)
		path := filepath.Join(t.TempDir(), "in.jsonl")
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := pipeline(db, config.Table{Source: "s.items"})
		cfg.Source.Set("paths", []string{path})
		cfg.BadInput = config.BadInputDeadLetter
		e := newEngine(t, cfg)
		if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
			t.Fatalf("run with dead-letter policy: %v", err)
		}
		wantItems, wantSeqs := "1|ok-1b", []string{"2", "3", "4"}
		if db.Dialect == "sqlite" {
			// SQLite keeps any length: line 3 is applied there.
			wantItems, wantSeqs = "1|ok-1b\n3|far too long for the column", []string{"2", "4"}
		}
		if got := query(t, db, "SELECT id, name FROM items ORDER BY id"); got != wantItems {
			t.Errorf("items = %q, want %q", got, wantItems)
		}
		if got := query(t, db, "SELECT seq FROM txsink_dead_letters ORDER BY id"); got != strings.Join(wantSeqs, "\n") {
			t.Errorf("dead letters at lines %q, want %q", got, strings.Join(wantSeqs, "\n"))
		}
		rows, err := e.Target().(sink.DeadLetterer).DeadLetters(context.Background(), cfg.Name)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(wantSeqs) || string(rows[0].Raw) != lines[1] || !strings.Contains(rows[0].Reason, "in.jsonl:2") {
			t.Errorf("dead letters: %+v", rows)
		}
		if got := query(t, db, "SELECT seq FROM txsink_progress"); got != "5" {
			t.Errorf("progress seq = %s, want 5 (past every record)", got)
		}
		if st := e.Stats(); st.DeadLetters != int64(len(wantSeqs)) {
			t.Errorf("Stats.DeadLetters = %d", st.DeadLetters)
		}
	})
}

// TestDeadLetterTransaction quarantines a whole source transaction whose
// second change is bad, in transaction mode: none of its changes is
// applied, the transactions around it are.
func TestDeadLetterTransaction(t *testing.T) {
	lines := []string{
		`{"op":"+I","table":"s.orders","row":{"id":1,"total":"5.00"},"txn":"t1"}`,
		`{"op":"+I","table":"s.items","row":{"order_id":1,"line":1,"price":"5.00"},"txn":"t1","txn_end":true}`,
		`{"op":"+I","table":"s.orders","row":{"id":2,"total":"7.00"},"txn":"t2"}`,
		`{"op":"+I","table":"s.items","row":{"order_id":2,"line":1,"price":"7.001"},"txn":"t2","txn_end":true}`,
		`{"op":"+I","table":"s.orders","row":{"id":3,"total":"1.00"},"txn":"t3"}`,
		`{"op":"+I","table":"s.items","row":{"order_id":3,"line":1,"price":"1.00"},"txn":"t3","txn_end":true}`,
	}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, `CREATE TABLE orders (id INT NOT NULL PRIMARY KEY, total DECIMAL(10,2) NOT NULL)`,
			`CREATE TABLE items (order_id INT NOT NULL, line INT NOT NULL, price DECIMAL(10,2) NOT NULL, PRIMARY KEY (order_id, line))`)
		path := filepath.Join(t.TempDir(), "in.jsonl")
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := txnPipeline(pipeline(db, config.Table{Source: "s.orders"}, config.Table{Source: "s.items"}))
		cfg.Source.Set("paths", []string{path})
		cfg.BadInput = config.BadInputDeadLetter
		e := newEngine(t, cfg)
		if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
			t.Fatalf("run: %v", err)
		}
		if got := query(t, db, "SELECT id FROM orders ORDER BY id"); got != "1\n3" {
			t.Errorf("orders = %q, want 1 and 3 (transaction t2 quarantined whole)", got)
		}
		if got := query(t, db, "SELECT order_id FROM items ORDER BY order_id"); got != "1\n3" {
			t.Errorf("items = %q", got)
		}
		rows, err := e.Target().(sink.DeadLetterer).DeadLetters(context.Background(), cfg.Name)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].TxnID != "t2" || rows[0].Seq != 4 || strings.Count(string(rows[0].Raw), "\n") != 2 || !strings.Contains(rows[0].Reason, "price") {
			t.Fatalf("dead letters: %+v", rows)
		}
		t.Logf("quarantined: %s\n%s", rows[0].Reason, rows[0].Raw)
		if got := query(t, db, "SELECT seq FROM txsink_progress"); got != "6" {
			t.Errorf("progress seq = %s, want 6", got)
		}
	})
}

// TestDeadLetterLongTxnID quarantines transactions whose ids are longer
// than any identifier column would be (600 and 70,000 characters), plain
// and transaction mode, on every server.
func TestDeadLetterLongTxnID(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) { longTxnIDs(t, db) })
}

// TestDeadLetterWidened widens a dead-letter table an older txsink created
// on MySQL/MariaDB (txn_id VARCHAR(512), reason TEXT), keeping its rows,
// and then stores the long ids there.
func TestDeadLetterWidened(t *testing.T) {
	db := testdb.Open(t, "mysql")
	db.Exec(t, "CREATE TABLE txsink_dead_letters (`id` BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,"+
		"`pipeline` VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,"+
		"`source_partition` VARCHAR(512) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,"+
		"`position` BIGINT NOT NULL, `seq` BIGINT NOT NULL, `txn_id` VARCHAR(512) NOT NULL,"+
		"`raw` LONGBLOB NOT NULL, `reason` TEXT NOT NULL,"+
		"`created_at` TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), KEY (`pipeline`, `id`)) ENGINE=InnoDB",
		"INSERT INTO txsink_dead_letters (pipeline, source_partition, position, seq, txn_id, raw, reason) VALUES ('earlier', 'p', 1, 1, 'x', 'r', 'why')")
	longTxnIDs(t, db)
	if got := query(t, db, "SELECT txn_id FROM txsink_dead_letters WHERE pipeline = 'earlier'"); got != "x" {
		t.Errorf("the older table's dead letter after widening: %q", got)
	}
}

// longTxnIDs runs two transactions with a bad value and ids of 600 and
// 70,000 characters, and one good one, into db under the dead-letter
// policy, plain and in transaction mode.
func longTxnIDs(t *testing.T, db *testdb.DB) {
	t.Helper()
	ids := []string{strings.Repeat("t", 600), strings.Repeat("é", 70000)}
	var lines []string
	for i, id := range ids {
		lines = append(lines, fmt.Sprintf(`{"op":"+I","table":"s.items","row":{"id":%d,"price":"1.001"},"txn":%q,"txn_end":true}`, i+1, id))
	}
	lines = append(lines, `{"op":"+I","table":"s.items","row":{"id":9,"price":"1.00"},"txn":"ok","txn_end":true}`)
	db.Exec(t, `CREATE TABLE items (id INT NOT NULL PRIMARY KEY, price DECIMAL(10,2) NOT NULL)`)
	path := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, txn := range []bool{false, true} {
		cfg := pipeline(db, config.Table{Source: "s.items"})
		cfg.Name = fmt.Sprintf("long-id-%v", txn)
		if txn {
			cfg = txnPipeline(cfg)
		}
		cfg.Source.Set("paths", []string{path})
		cfg.BadInput = config.BadInputDeadLetter
		e := newEngine(t, cfg)
		if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
			t.Fatalf("run (transaction mode %v): %v", txn, err)
		}
		rows, err := e.Target().(sink.DeadLetterer).DeadLetters(context.Background(), cfg.Name)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 || rows[0].TxnID != ids[0] || rows[1].TxnID != ids[1] {
			t.Fatalf("transaction mode %v: %d dead letters, want the 2 transactions with their whole ids", txn, len(rows))
		}
	}
	if got := query(t, db, "SELECT id FROM items"); got != "9" {
		t.Errorf("items = %q, want 9", got)
	}
}

// refusalCase is a row the server itself refuses, txsink's checks having
// let it through: the table it is refused by, and the bad change's row.
type refusalCase struct {
	name     string
	dialects []string // "" : every server
	table    string   // CREATE TABLE items (...)
	op       string   // the refused change's op: "+I" unless set
	bad      string   // the row of the refused change, id 4
	reason   string   // in the dead letter's reason, lower case
}

var refusalCases = []refusalCase{
	{name: "nul", dialects: []string{"postgres"},
		table: `CREATE TABLE items (id INT NOT NULL PRIMARY KEY, name TEXT NOT NULL, note VARCHAR(20))`,
		bad:   `{"id":4,"name":"a\u0000b"}`, reason: "22021"},
	{name: "check",
		table: `CREATE TABLE items (id INT NOT NULL PRIMARY KEY, name VARCHAR(20) NOT NULL, note VARCHAR(20), CONSTRAINT name_short CHECK (name <> 'forbidden'))`,
		bad:   `{"id":4,"name":"forbidden"}`, reason: "name_short"},
	{name: "not-null-without-default",
		table: `CREATE TABLE items (id INT NOT NULL PRIMARY KEY, name VARCHAR(20), note VARCHAR(20) NOT NULL)`,
		bad:   `{"id":4,"name":"no note"}`, reason: "note"},
	// txsink's own check refuses an explicit NULL before the server
	// does; it is quarantined the same way.
	{name: "null-into-not-null",
		table: `CREATE TABLE items (id INT NOT NULL PRIMARY KEY, name VARCHAR(20), note VARCHAR(20) NOT NULL)`,
		bad:   `{"id":4,"name":"null note","note":null}`, reason: "note"},
	// An update image without every column, of a row the target lacks:
	// the columns it lacks have no value to keep.
	{name: "partial-update-of-a-missing-row", op: "+U",
		table: `CREATE TABLE items (id INT NOT NULL PRIMARY KEY, name VARCHAR(20), note VARCHAR(20) NOT NULL)`,
		bad:   `{"id":4,"name":"partial"}`, reason: "not in the target"},
}

// refusalLines are three source transactions of two changes each; the
// second one's second change is bad.
func refusalLines(op, bad string) []string {
	if op == "" {
		op = "+I"
	}
	// The lines are as txsink-json writes them, so that a quarantined
	// transaction's raw text is these lines.
	ok := func(id int, name, txn string, end bool) string {
		tail := ""
		if end {
			tail = `,"txn_end":true`
		}
		return fmt.Sprintf(`{"op":"+I","table":"s.items","row":{"id":%d,"name":%q,"note":"n"},"txn":%q%s}`, id, name, txn, tail)
	}
	return []string{
		ok(1, "one", "t1", false),
		ok(2, "two", "t1", true),
		ok(3, "three", "t2", false),
		`{"op":"` + op + `","table":"s.items","row":` + bad + `,"txn":"t2","txn_end":true}`,
		ok(5, "five", "t3", false),
		`{"op":"+U","table":"s.items","row":{"id":1,"name":"one again","note":"n"},"txn":"t3","txn_end":true}`,
	}
}

// TestDeadLetterServerRefusals feeds a row the server refuses — a NUL
// into PostgreSQL text, a CHECK violation, a NOT NULL column without a
// default that the change does not carry — plain and in transaction mode,
// a flush per change and all in one flush. The default policy stops with
// an error naming the row; the dead-letter policy quarantines the record
// (plain) or its whole source transaction (transaction mode) with the
// server's reason, applies the rest, moves progress past it, and a rerun
// changes nothing.
func TestDeadLetterServerRefusals(t *testing.T) {
	for _, tc := range refusalCases {
		t.Run(tc.name, func(t *testing.T) {
			forEachDialect(t, func(t *testing.T, db *testdb.DB) {
				if len(tc.dialects) > 0 && !strings.Contains(strings.Join(tc.dialects, " "), db.Dialect) {
					t.Skipf("%s accepts it", db.Dialect)
				}
				db.Exec(t, tc.table)
				lines := refusalLines(tc.op, tc.bad)
				path := filepath.Join(t.TempDir(), "in.jsonl")
				if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				for _, txn := range []bool{false, true} {
					for _, maxRows := range []int{1, 10000} {
						name := fmt.Sprintf("refusal-txn-%v-rows-%d", txn, maxRows)
						t.Run(name, func(t *testing.T) {
							serverRefusal(t, db, tc, path, lines, name, txn, maxRows)
						})
					}
				}
			})
		})
	}
}

func serverRefusal(t *testing.T, db *testdb.DB, tc refusalCase, path string, lines []string, name string, txn bool, maxRows int) {
	t.Helper()
	db.Exec(t, "DELETE FROM items")
	cfg := pipeline(db, config.Table{Source: "s.items"})
	cfg.Name = name
	if txn {
		cfg = txnPipeline(cfg)
	}
	cfg.Sink.FlushMaxRows = maxRows
	cfg.Source.Set("paths", []string{path})

	// The default policy: stop, naming the row.
	err := newEngine(t, cfg).Run(context.Background(), engine.RunOptions{})
	if err == nil || !strings.Contains(err.Error(), "(4)") {
		t.Fatalf("run under bad-input: fail = %v, want an error naming key (4)", err)
	}

	cfg.BadInput = config.BadInputDeadLetter
	want := "1|one again\n2|two\n3|three\n5|five"
	wantSeq, wantRaw := int64(4), lines[3]
	if txn {
		// The whole of t2 goes, its good change with it.
		want, wantSeq, wantRaw = "1|one again\n2|two\n5|five", 4, lines[2]+"\n"+lines[3]
	}
	for run := 1; run <= 2; run++ {
		e := newEngine(t, cfg)
		if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
			t.Fatalf("run %d under bad-input: dead-letter: %v", run, err)
		}
		if got := query(t, db, "SELECT id, name FROM items ORDER BY id"); got != want {
			t.Errorf("run %d: items = %q, want %q", run, got, want)
		}
		rows, err := e.Target().(sink.DeadLetterer).DeadLetters(context.Background(), cfg.Name)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 {
			t.Fatalf("run %d: %d dead letters, want 1: %+v", run, len(rows), rows)
		}
		d := rows[0]
		if d.Seq != wantSeq || strings.TrimSpace(string(d.Raw)) != wantRaw || !strings.Contains(strings.ToLower(d.Reason), tc.reason) || !strings.Contains(d.Reason, "(4)") {
			t.Errorf("run %d: dead letter seq %d raw %q reason %q; want seq %d, raw %q, a reason with %q naming key (4)", run, d.Seq, d.Raw, d.Reason, wantSeq, wantRaw, tc.reason)
		}
		if txn && d.TxnID != "t2" {
			t.Errorf("run %d: dead letter of transaction %q, want t2", run, d.TxnID)
		}
		if got := query(t, db, "SELECT seq FROM txsink_progress WHERE pipeline = '"+cfg.Name+"'"); got != "6" {
			t.Errorf("run %d: progress seq = %s, want 6", run, got)
		}
		wantLetters := int64(1)
		if run == 2 {
			wantLetters = 0 // nothing read again
		}
		if st := e.Stats(); st.DeadLetters != wantLetters {
			t.Errorf("run %d: Stats.DeadLetters = %d, want %d", run, st.DeadLetters, wantLetters)
		}
	}
}

// TestDeadLetterForeignKeyStops checks that a refusal which depends on
// other rows — a foreign key whose parent row is missing — is not taken
// for bad input under the dead-letter policy: the pipeline stops, naming
// the row at fault (not the one before it, whose parent the flush wrote
// first), and quarantines nothing.
func TestDeadLetterForeignKeyStops(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, `CREATE TABLE parents (id INT NOT NULL PRIMARY KEY)`,
			`CREATE TABLE items (id INT NOT NULL PRIMARY KEY, parent INT NOT NULL, FOREIGN KEY (parent) REFERENCES parents (id))`)
		path := filepath.Join(t.TempDir(), "in.jsonl")
		lines := `{"op":"+I","table":"s.parents","row":{"id":1}}` + "\n" +
			`{"op":"+I","table":"s.items","row":{"id":1,"parent":1}}` + "\n" +
			`{"op":"+I","table":"s.items","row":{"id":2,"parent":99}}` + "\n"
		if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := pipeline(db, config.Table{Source: "s.parents"}, config.Table{Source: "s.items"})
		cfg.Source.Set("paths", []string{path})
		cfg.BadInput = config.BadInputDeadLetter
		e := newEngine(t, cfg)
		err := e.Run(context.Background(), engine.RunOptions{})
		if err == nil || !strings.Contains(err.Error(), "(2)") {
			t.Fatalf("run = %v, want the foreign key's refusal of key (2)", err)
		}
		if rows, err := e.Target().(sink.DeadLetterer).DeadLetters(context.Background(), cfg.Name); err != nil || len(rows) != 0 {
			t.Errorf("dead letters %+v (%v), want none", rows, err)
		}
		if got := query(t, db, "SELECT COUNT(*) FROM items"); got != "0" {
			t.Errorf("%s items committed, want none", got)
		}
	})
}

// TestDeadLetterRefusalMerged refuses a row two changes made: an insert
// the server refuses and a partial update of it. In one flush the merged
// row is refused; flush by flush the insert is, and then the update has
// no row. Either way both are quarantined and the rest applies, plain and
// in transaction mode, on every server.
func TestDeadLetterRefusalMerged(t *testing.T) {
	lines := []string{
		`{"op":"+I","table":"s.items","row":{"id":4,"name":"forbidden","note":"n"},"txn":"t1","txn_end":true}`,
		`{"op":"+U","table":"s.items","row":{"id":4,"note":"m"},"txn":"t2","txn_end":true}`,
		`{"op":"+I","table":"s.items","row":{"id":5,"name":"five","note":"n"},"txn":"t3","txn_end":true}`,
	}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, refusalCases[1].table)
		path := filepath.Join(t.TempDir(), "in.jsonl")
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, txn := range []bool{false, true} {
			for _, maxRows := range []int{1, 10000} {
				db.Exec(t, "DELETE FROM items")
				cfg := pipeline(db, config.Table{Source: "s.items"})
				cfg.Name = fmt.Sprintf("merged-txn-%v-rows-%d", txn, maxRows)
				if txn {
					cfg = txnPipeline(cfg)
				}
				cfg.Sink.FlushMaxRows = maxRows
				cfg.Source.Set("paths", []string{path})
				cfg.BadInput = config.BadInputDeadLetter
				e := newEngine(t, cfg)
				if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
					t.Fatalf("%s: %v", cfg.Name, err)
				}
				if got := query(t, db, "SELECT id FROM items"); got != "5" {
					t.Errorf("%s: items = %q, want 5", cfg.Name, got)
				}
				if got := query(t, db, "SELECT seq FROM txsink_dead_letters WHERE pipeline = '"+cfg.Name+"' ORDER BY seq"); got != "1\n2" {
					t.Errorf("%s: dead letters at lines %q, want 1 and 2", cfg.Name, got)
				}
			}
		}
	})
}
