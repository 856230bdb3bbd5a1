package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/sink"
)

// TestRetriesExhausted stops on a transient error that every retry meets
// again, plain and in transaction mode, on every server: the error says
// txsink gave up after sink.max-retries retries, not that it retries.
func TestRetriesExhausted(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, `CREATE TABLE items (id INT NOT NULL PRIMARY KEY, name VARCHAR(10) NOT NULL)`)
		path := filepath.Join(t.TempDir(), "in.jsonl")
		if err := os.WriteFile(path, []byte(`{"op":"+I","table":"s.items","row":{"id":1,"name":"a"},"txn":"t1","txn_end":true}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, txn := range []bool{false, true} {
			cfg := pipeline(db, config.Table{Source: "s.items"})
			if txn {
				cfg = txnPipeline(cfg)
			}
			cfg.Source.Set("paths", []string{path})
			cfg.Sink.MaxRetries = 2
			attempts := 0
			e := newEngine(t, cfg, engine.WithBeforeCommitHook(func(*commit.Unit) error {
				attempts++
				return &sink.Error{Op: "commit", Transient: true, Err: errors.New("connection reset by peer (injected)")}
			}))
			err := e.Run(context.Background(), engine.RunOptions{})
			var te *sink.Error
			if !errors.As(err, &te) || !te.GaveUp || te.Retries != 2 || attempts != 3 ||
				!strings.Contains(err.Error(), "persisted through 2 retries") || strings.Contains(err.Error(), "txsink retries)") {
				t.Fatalf("transaction mode %v: %d attempts, error %v; want 3 attempts and an error that says txsink gave up", txn, attempts, err)
			}
			if got := query(t, db, "SELECT COUNT(*) FROM items"); got != "0" {
				t.Errorf("rows = %s, want none", got)
			}
		}
	})
}
