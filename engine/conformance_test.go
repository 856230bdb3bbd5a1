package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
)

// conformanceDir holds the changelog fixtures of other projects, beside the
// repository (see ../shared/conformance/README.md).
const conformanceDir = "../../shared/conformance"

func conformance(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join(conformanceDir, rel)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("conformance fixture %s is missing: CI must have ../shared beside the repository", p)
		}
		t.Skipf("conformance fixtures not found at %s (they live in ../shared beside the repository)", p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

type finalState struct {
	PrimaryKey []string         `json:"primary_key"`
	Columns    []string         `json:"columns"`
	Rows       []map[string]any `json:"rows"`
}

// TestDebeziumConformance applies every Debezium fixture of Flink's
// flink-json tests to every server, through the file source, and checks
// that the table equals the fixture's final state. Small flushes make the
// run cross many flush boundaries.
func TestDebeziumConformance(t *testing.T) {
	files := []string{
		"debezium/debezium-data-schema-include.txt",
		"debezium/debezium-data-schema-exclude.txt",
		"debezium/debezium-postgres-data-schema-include.txt",
		"debezium/debezium-postgres-data-schema-exclude.txt",
	}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		for _, rel := range files {
			path := conformance(t, rel)
			raw, err := os.ReadFile(path + ".final.json")
			if err != nil {
				t.Fatal(err)
			}
			var want finalState
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			tbl := "products_" + strconv.Itoa(len(rel)) + strings.NewReplacer("-", "_", "/", "_", ".", "_").Replace(filepath.Base(rel))
			tbl = tbl[:min(len(tbl), 60)]
			db.Exec(t, `CREATE TABLE `+tbl+` (id INT NOT NULL PRIMARY KEY, name VARCHAR(255) NOT NULL, description VARCHAR(512), weight FLOAT)`)
			for _, flushRows := range []int{3, 1000} {
				db.Exec(t, "DELETE FROM "+tbl)
				cfg := pipeline(db, config.Table{Source: "inventory.products", Target: tbl})
				cfg.Name = "conf-" + strconv.Itoa(flushRows) + "-" + filepath.Base(rel)
				cfg.Source.Format = "debezium-json"
				cfg.Source.Paths = []string{path}
				cfg.Sink.FlushMaxRows = flushRows
				e := newEngine(t, cfg)
				if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
					t.Fatalf("%s: %v", rel, err)
				}
				got := query(t, db, "SELECT id, name, description, weight FROM "+tbl+" ORDER BY id")
				lines := strings.Split(got, "\n")
				if len(lines) != len(want.Rows) {
					t.Fatalf("%s (flush every %d rows): %d rows, want %d:\n%s", rel, flushRows, len(lines), len(want.Rows), got)
				}
				for i, w := range want.Rows {
					f := strings.Split(lines[i], "|")
					if len(f) != 4 {
						t.Fatalf("bad row %q", lines[i])
					}
					wid := strconv.FormatFloat(w["id"].(float64), 'f', -1, 64)
					wdesc := "NULL"
					if d, ok := w["description"].(string); ok {
						wdesc = d
					}
					if f[0] != wid || f[1] != w["name"] || f[2] != wdesc || !sameFloat32(f[3], w["weight"].(float64)) {
						t.Errorf("%s (flush every %d rows) row %d: got %q, want %v", rel, flushRows, i, lines[i], w)
					}
				}
			}
		}
	})
}

// sameFloat32 compares a FLOAT column's text with the fixture's value at
// float32 precision: the fixtures print the float32 a source FLOAT held.
func sameFloat32(got string, want float64) bool {
	g, err := strconv.ParseFloat(got, 64)
	if err != nil {
		return false
	}
	return float32(g) == float32(want)
}

// TestDebeziumReplicaIdentityRefused checks the fixture whose updates lack
// a before image (PostgreSQL REPLICA IDENTITY DEFAULT): the run stops at
// line 10 with the peer's message, and nothing is committed.
func TestDebeziumReplicaIdentityRefused(t *testing.T) {
	db := testdb.SQLite(t)
	path := conformance(t, "debezium/debezium-postgres-data-replica-identity.txt")
	db.Exec(t, `CREATE TABLE products (id INT NOT NULL PRIMARY KEY, name VARCHAR(255) NOT NULL, description VARCHAR(512), weight FLOAT)`)
	cfg := pipeline(db, config.Table{Source: "inventory.products"})
	cfg.Source.Format = "debezium-json"
	cfg.Source.Paths = []string{path}
	e := newEngine(t, cfg)
	err := e.Run(context.Background(), engine.RunOptions{})
	if err == nil {
		t.Fatal("run succeeded, want the replica identity error")
	}
	for _, w := range []string{"replica-identity.txt:10", `The "before" field of UPDATE message is null`, "REPLICA IDENTITY"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	if got := query(t, db, "SELECT COUNT(*) FROM products"); got != "0" {
		t.Errorf("%s rows committed, want 0", got)
	}
}
