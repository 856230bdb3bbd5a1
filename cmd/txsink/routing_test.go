package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/txsink/txsink/internal/testdb"
)

// TestRunRoutingConfined is issue 23's finding 0 as a user meets it: a
// wildcard entry whose target defaults to the source table's name, and
// records naming a table "<victim>.t" — where <victim> is a real
// database (MySQL) or schema (PostgreSQL) beside the target's own, with a
// table t — in Debezium's source.table, txsink-json's table and an OGG
// three-part name. 'txsink check' reports each as an error; 'txsink run'
// exits non-zero naming the record's position and the table, and writes
// nothing; under bad-input: dead-letter it exits 0 with the records
// quarantined. Table t stays empty throughout.
func TestRunRoutingConfined(t *testing.T) {
	txsinkBinary(t) // build (or skip) before the servers are set up
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		victim := db.Neighbour(t)
		victimTable := db.Quote(victim) + ".t"
		db.Exec(t, "CREATE TABLE "+victimTable+" (id INT NOT NULL PRIMARY KEY, v INT NULL)")
		db.Exec(t, "CREATE TABLE ok (id INT NOT NULL PRIMARY KEY, v INT NULL)")
		bad := strconv.Quote(victim + ".t")
		for _, tc := range []struct {
			name, format, source string
			records              []string
		}{
			{"debezium source.table", "debezium-json", "inventory.*", []string{
				`{"before":null,"after":{"id":1,"v":1},"source":{"connector":"mysql","db":"inventory","table":"ok"},"op":"c","ts_ms":1}`,
				`{"before":null,"after":{"id":1,"v":1},"source":{"connector":"mysql","db":"inventory","table":` + bad + `},"op":"c","ts_ms":1}`,
				`{"before":{"id":1,"v":1},"after":{"id":1,"v":2},"source":{"connector":"mysql","db":"inventory","table":` + bad + `},"op":"u","ts_ms":2}`,
				`{"before":{"id":1,"v":2},"after":null,"source":{"connector":"mysql","db":"inventory","table":` + bad + `},"op":"d","ts_ms":3}`,
				`{"before":null,"after":{"id":2,"v":1},"source":{"connector":"mysql","db":"inventory","table":` + bad + `},"op":"c","ts_ms":4}`,
			}},
			{"txsink-json table", "txsink-json", "shop.*", []string{
				`{"op":"+I","table":"shop.ok","row":{"id":1,"v":1}}`,
				`{"op":"+I","table":` + strconv.Quote("shop."+victim+".t") + `,"row":{"id":2,"v":1}}`,
			}},
			{"ogg three-part name", "ogg-json", "pdb.*", []string{
				`{"table":"PDB.ok","op_type":"I","op_ts":"2020-05-13 15:40:06.000000","pos":"1","after":{"id":1,"v":1}}`,
				`{"table":` + strconv.Quote("PDB."+victim+".t") + `,"op_type":"I","op_ts":"2020-05-13 15:40:06.000000","pos":"2","after":{"id":2,"v":1}}`,
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				defer func() {
					if got := count(t, db, victimTable); got != 0 {
						t.Errorf("%s has %d rows, want 0", victimTable, got)
					}
				}()
				dir := t.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "p0.jsonl"), []byte(strings.Join(tc.records, "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				name := "route-" + strings.ReplaceAll(tc.name, " ", "-")
				write := func(top string) string {
					cfg := filepath.Join(dir, "pipeline.yaml")
					yaml := "name: " + name + "\n" + top + "source:\n  type: file\n  paths: [p0.jsonl]\n  format: " + tc.format + "\n" +
						"target:\n  url: " + strconv.Quote(db.URL) + "\ntables:\n  - source: " + strconv.Quote(tc.source) + "\n"
					if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
						t.Fatal(err)
					}
					return cfg
				}
				cfg := write("")
				refusal := []string{"p0.jsonl:2", strconv.Quote(victim + ".t"), "holds a dot", "target:"}
				code, stdout, stderr := runTxsink(t, "check", "--config", cfg)
				if code != 1 || !containsAll(stderr, refusal) {
					t.Errorf("check: exit %d, want 1 and an error saying %q\nstdout:\n%s\nstderr:\n%s", code, refusal, stdout, stderr)
				}
				code, stdout, stderr = runTxsink(t, "run", "--config", cfg)
				if code == 0 || !containsAll(stderr, refusal) {
					t.Errorf("run: exit %d, want non-zero and an error saying %q\nstdout:\n%s\nstderr:\n%s", code, refusal, stdout, tail(stderr))
				}
				if got := count(t, db, "ok"); got != 0 {
					t.Errorf("ok has %d rows after the refused run, want 0: nothing past the last commit", got)
				}
				cfg = write("bad-input: dead-letter\n")
				code, stdout, stderr = runTxsink(t, "run", "--config", cfg)
				if code != 0 {
					t.Errorf("run under dead-letter: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, tail(stderr))
				}
				if got, want := count(t, db, "txsink_dead_letters WHERE pipeline = '"+name+"'"), len(tc.records)-1; got != want {
					t.Errorf("%d records dead-lettered, want %d", got, want)
				}
				db.Exec(t, "DELETE FROM ok")
			})
		}
	})
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
