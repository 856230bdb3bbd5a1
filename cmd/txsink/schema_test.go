package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txsink/txsink/internal/golden"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/sink/sinktest"
)

// TestSchemaCommand starts from an empty database on every server, for
// each format that declares types, and for maxwell-json, which declares
// none, with declared columns: txsink schema prints the statements
// (kept in testdata/schema/FORMAT-DIALECT.txt), check passes and writes
// nothing, run creates the tables and applies the changelog, and schema
// then marks the tables as existing.
func TestSchemaCommand(t *testing.T) {
	formats := []struct {
		format, input, tables string
		// want is each created table's rows, as "table: rows".
		want []string
	}{
		{"canal-json", "canal.jsonl", "  - source: inventory.*\n", []string{
			"orders: 1|ÀB😀|99999999.99|new|18446744073709551615\n2|x|-0.01|paid|NULL",
			"order_lines: 1|1|A-1"}},
		{"debezium-json", "debezium.jsonl", "  - source: inventory.*\n    primary-key: [id]\n", []string{
			"accounts: 1001|0|café \"quoted\""}},
		// Maxwell's records carry no types: each entry declares its
		// columns, and archive, which no change reaches, is printed too.
		{"maxwell-json", "maxwell.jsonl", `  - source: inventory.customers
    primary-key: [id]
    columns:
      - {name: id, type: bigint}
      - {name: email, type: varchar(255), null: false}
      - {name: born, type: date}
      - name: price
        type: decimal(10,2)
        default: 0
  - source: inventory.archive
    primary-key: [id]
    columns: [{name: id, type: int unsigned}, {name: doc, type: json}]
  - source: inventory.*
    primary-key: [id]
    columns: [{name: id, type: int}, {name: name, type: "varchar(8)"}]
`, []string{
			"customers: 1|b@x.org|1990-01-02 00:00:00.000|99999999.99",
			"suppliers: 7|ÀB😀"}},
	}
	cols := map[string]string{"orders": "id, code, price, state, big", "order_lines": "order_id, line, sku", "accounts": "id, price, note",
		"customers": "id, email, born, price", "suppliers": "id, name"}
	for _, d := range testdb.Dialects {
		for _, f := range formats {
			t.Run(f.format+"-"+d, func(t *testing.T) {
				db := testdb.Open(t, d)
				if d == "sqlite" {
					db.Exec(t, "PRAGMA user_version = 1") // an empty database, not a missing file
				}
				dir := t.TempDir()
				data, err := os.ReadFile(filepath.Join("testdata", "schema", f.input))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, f.input), data, 0o644); err != nil {
					t.Fatal(err)
				}
				cfg := filepath.Join(dir, "pipeline.yaml")
				yaml := fmt.Sprintf("name: schema\nsource: {type: file, paths: [%s], format: %s}\ntarget: {url: %q}\ntables:\n%sschema: {create: missing}\n",
					f.input, f.format, db.URL, f.tables)
				if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
					t.Fatal(err)
				}
				code, stdout, stderr := runInProcess(t, "schema", "--config", cfg)
				if code != 0 {
					t.Fatalf("schema: exit %d\n%s%s", code, stdout, stderr)
				}
				golden.Check(t, filepath.Join("schema", f.format+"-"+d+".txt"), stdout)
				if code, stdout, _ := runInProcess(t, "check", "--config", cfg); code != 0 {
					t.Fatalf("check: exit %d\n%s", code, stdout)
				}
				if code, _, stderr := runInProcess(t, "run", "--config", cfg, "--http", "off"); code != 0 {
					t.Fatalf("run: exit %d\n%s", code, stderr)
				}
				for _, w := range f.want {
					table, want, _ := strings.Cut(w, ": ")
					sel := cols[table]
					if d == "sqlite" {
						// SQLite keeps a decimal as REAL; its text is exact.
						sel = strings.Replace(sel, "price", "CAST(price AS TEXT)", 1)
					}
					got := sinktest.Rows(t, db.SQL, "SELECT "+sel+" FROM "+db.Quote(table)+" ORDER BY 1")
					if got != want {
						t.Errorf("%s: got\n%s\nwant\n%s", table, got, want)
					}
				}
				_, stdout, _ = runInProcess(t, "schema", "--config", cfg)
				if n := strings.Count(stdout, ": exists already;"); n != len(f.want) {
					t.Errorf("after the run, schema marks %d tables as existing, want %d:\n%s", n, len(f.want), stdout)
				}
			})
		}
	}
}
