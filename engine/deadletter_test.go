package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
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
		cfg.Source.Paths = []string{path}
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
		rows, err := e.Target().DeadLetters(context.Background(), cfg.Name)
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
		cfg.Source.Paths = []string{path}
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
		rows, err := e.Target().DeadLetters(context.Background(), cfg.Name)
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
