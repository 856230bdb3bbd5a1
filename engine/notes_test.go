package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
)

// TestSchemaChangesAndMessagesSkipped runs a Debezium changelog whose
// rows are interleaved with schema change events (of a table, of another
// table no tables entry names, of the whole database, with and without
// the Connect schema) and logical decoding messages (op "m"),
// testdata/skipped-debezium.jsonl, in plain and transaction mode: the rows
// are applied, the others are counted and never an error, and each kind
// is logged once per table or database.
func TestSchemaChangesAndMessagesSkipped(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		for _, txn := range []bool{false, true} {
			t.Run(fmt.Sprintf("txn=%v", txn), func(t *testing.T) {
				db.Exec(t, "DROP TABLE IF EXISTS customers",
					"CREATE TABLE customers (id INT NOT NULL PRIMARY KEY, first_name VARCHAR(40) NOT NULL, middle_name VARCHAR(40))")
				path, err := filepath.Abs(filepath.Join("testdata", "skipped-debezium.jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				cfg := pipeline(db, config.Table{Source: "inventory.customers", Target: "customers"})
				cfg.Name = fmt.Sprintf("skipped-%v", txn)
				cfg.Source.Format = "debezium-json"
				cfg.Source.Set("paths", []string{path})
				if txn {
					txnPipeline(cfg)
				}
				var logs bytes.Buffer
				e := newEngine(t, cfg, engine.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
				if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
					t.Fatalf("Run = %v", err)
				}
				if got := query(t, db, "SELECT id, first_name, middle_name FROM customers ORDER BY id"); got != "1|Ada|NULL\n2|Grace|B\n3|Edsger|NULL" {
					t.Errorf("rows:\n%s", got)
				}
				st := e.Stats()
				var events int64
				for _, n := range st.Events {
					events += n
				}
				if st.SchemaChanges != 4 || st.Messages != 2 || events != 3 {
					t.Errorf("schema changes %d, messages %d, events %d; want 4, 2, 3", st.SchemaChanges, st.Messages, events)
				}
				if s := e.Status().Stats; s.SchemaChanges != 4 || s.Messages != 2 {
					t.Errorf("status: schema changes %d, messages %d; want 4, 2", s.SchemaChanges, s.Messages)
				}
				for _, want := range []struct {
					line string
					n    int
				}{
					{"skipping schema change records", 3},
					{"skipping schema change records: txsink applies rows, never DDL; if the target table needs the change, alter it (a column added or widened is picked up without a restart); later ones of this database are counted, not logged\" database=inventory", 1},
					{"table=inventory.customers", 1},
					{"table=inventory.orders", 1},
					{"skipping logical decoding messages", 1},
				} {
					if got := strings.Count(logs.String(), want.line); got != want.n {
						t.Errorf("the log holds %q %d times, want %d:\n%s", want.line, got, want.n, logs.String())
					}
				}
			})
		}
	})
}
