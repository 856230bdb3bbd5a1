package main

import (
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txsink/txsink/internal/testdb"
)

// exampleRow is a row of products as the examples leave it.
type exampleRow struct {
	id       int
	name     string
	price    string // exact decimal
	quantity int
	note     string // "" for NULL
}

// exampleFinal is the products table after either example changelog: three
// inserts, two updates (one renaming and repricing), a delete and an insert.
var exampleFinal = []exampleRow{
	{1, "Widget", "8.99", 7, ""},
	{2, "Gadget Pro", "1234.50", 4, `fragile, "handle with care"`},
	{4, "Sprocket", "0.05", 250, "née Cog"},
}

// TestExamples runs each changelog of examples/ with examples/pipeline.yaml
// into each database, its table made by the example's own DDL, and checks
// txsink check passes and the final rows, as a user following
// examples/README.md would get them.
func TestExamples(t *testing.T) {
	for _, dialect := range []string{"mysql", "postgres", "sqlite"} {
		ddl := map[string]string{"mysql": "schema-mariadb.sql", "postgres": "schema-postgres.sql", "sqlite": "schema-sqlite.sql"}[dialect]
		for _, changelog := range []string{"debezium-with-schema.jsonl", "debezium-without-schema.jsonl"} {
			t.Run(dialect+"/"+changelog, func(t *testing.T) {
				db := testdb.Open(t, dialect)
				db.Exec(t, sqlStatements(t, filepath.Join("../../examples", ddl))...)
				dir := t.TempDir()
				for _, f := range []string{changelog, "pipeline.yaml"} {
					data, err := os.ReadFile(filepath.Join("../../examples", f))
					if err != nil {
						t.Fatal(err)
					}
					if f == "pipeline.yaml" {
						data = []byte(replaceOnce(t, replaceOnce(t, string(data),
							"url: sqlite://example.db", "url: '"+db.URL+"'"),
							"paths: [debezium-with-schema.jsonl]", "paths: ["+changelog+"]"))
					}
					if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				cfg := filepath.Join(dir, "pipeline.yaml")
				if code, stdout, stderr := runTxsink(t, "check", "--config", cfg); code != 0 || !strings.Contains(stdout, "configuration OK; 0 errors, 0 warnings") {
					t.Fatalf("txsink check: exit %d\n%s%s", code, stdout, stderr)
				}
				if code, stdout, stderr := runTxsink(t, "run", "--config", cfg, "--http", "off"); code != 0 {
					t.Fatalf("txsink run: exit %d\n%s%s", code, stdout, tail(stderr))
				}
				rows, err := db.SQL.Query("SELECT id, name, price, quantity, COALESCE(note, '') FROM products ORDER BY id")
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				var got []exampleRow
				for rows.Next() {
					var r exampleRow
					if err := rows.Scan(&r.id, &r.name, &r.price, &r.quantity, &r.note); err != nil {
						t.Fatal(err)
					}
					got = append(got, r)
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
				if len(got) != len(exampleFinal) {
					t.Fatalf("products holds %v, want %v", got, exampleFinal)
				}
				for i, w := range exampleFinal {
					g := got[i]
					gp, ok1 := new(big.Rat).SetString(g.price)
					wp, _ := new(big.Rat).SetString(w.price)
					if g.id != w.id || g.name != w.name || !ok1 || gp.Cmp(wp) != 0 || g.quantity != w.quantity || g.note != w.note {
						t.Errorf("row %d is %+v, want %+v", i, g, w)
					}
				}
			})
		}
	}
}

// sqlStatements reads a .sql file of statements ended by ";", its "--"
// comments dropped.
func sqlStatements(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i]
		}
		b.WriteString(line + "\n")
	}
	var out []string
	for _, s := range strings.Split(b.String(), ";") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// replaceOnce replaces old, which s must hold exactly once, by new.
func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	if n := strings.Count(s, old); n != 1 {
		t.Fatalf("the example holds %q %d times, want once", old, n)
	}
	return strings.Replace(s, old, new, 1)
}
