package engine_test

import (
	"testing"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/internal/testdb"
)

// TestNarrowedBeforeImages runs Debezium updates and deletes of a table
// its tables entry names, on every server: the engine tells the decoder
// the table's key before reading anything, so an update's before image is
// read for its key alone (a column named twice outside the key is not
// refused, README "Values"), an update that changes the key still deletes
// the old row, and a delete, whose before image is read whole, is guarded
// by the version it carries.
func TestNarrowedBeforeImages(t *testing.T) {
	rec := func(op, before, after string) string {
		return `{"before":` + before + `,"after":` + after + `,"source":{"db":"shop","table":"orders"},"op":"` + op + `"}`
	}
	lines := []string{
		rec("c", "null", `{"id":1,"v":1,"name":"a"}`),
		rec("c", "null", `{"id":3,"v":1,"name":"c"}`),
		rec("c", "null", `{"id":4,"v":9,"name":"d"}`),
		rec("u", `{"id":1,"v":1,"name":"a","name":"twice"}`, `{"id":1,"v":2,"name":"b"}`),
		rec("u", `{"id":1,"v":2,"name":"b"}`, `{"id":2,"v":3,"name":"b"}`),
		rec("d", `{"id":3,"v":5,"name":"c"}`, "null"),
		rec("d", `{"id":4,"v":8,"name":"d"}`, "null"),
	}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, `CREATE TABLE orders_nb (id INT NOT NULL PRIMARY KEY, v INT NOT NULL, name VARCHAR(20))`)
		cfg := pipeline(db, config.Table{Source: "shop.orders", Target: "orders_nb", VersionColumn: "v"})
		cfg.Source.Format = "debezium-json"
		// The inserts committed first, so the version guard meets the
		// stored rows.
		dir := t.TempDir()
		inserts, changes := writeLines(t, dir, "inserts.jsonl", lines[:3]), writeLines(t, dir, "changes.jsonl", lines[3:])
		for _, paths := range [][]string{{inserts}, {inserts, changes}} {
			cfg.Source.Set("paths", paths)
			if err := runOnce(t, cfg); err != nil {
				t.Fatal(err)
			}
		}
		// 1 moved to 2; 3 deleted at version 5; 4 kept, its version 9
		// newer than the delete's 8.
		if got, want := query(t, db, "SELECT id, v, name FROM orders_nb ORDER BY id"), "2|3|b\n4|9|d"; got != want {
			t.Errorf("orders_nb:\n%s\nwant\n%s", got, want)
		}
	})
}
