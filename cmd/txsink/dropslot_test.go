package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txsink/txsink/internal/testdb"
)

// TestDropSlot runs txsink drop-slot on a pipeline's PostgreSQL source:
// it says when there is no slot, drops the one there is, and refuses a
// source without slots.
func TestDropSlot(t *testing.T) {
	src := testdb.PrivatePostgres(t)
	src.Exec(t, "CREATE TABLE kv (id int PRIMARY KEY, v text)")
	dir := t.TempDir()
	write := func(name, source string) string {
		p := filepath.Join(dir, name)
		cfg := "name: drops\nsource:\n" + source + "target:\n  url: sqlite://t.db\ntables:\n  - source: public.kv\nsink:\n  transaction.multi-table.enabled: true\n"
		if err := os.WriteFile(p, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pg := write("pg.yaml", "  type: postgres\n  format: txsink-json\n  url: "+src.URL+"\n  tables: [public.kv]\n")
	files := write("files.yaml", "  type: file\n  format: debezium-json\n  paths: [a.jsonl]\n")
	steps := []struct {
		before, config string
		code           int
		want           string
	}{
		{"", pg, 0, "there is no replication slot txsink_drops; nothing dropped"},
		{"SELECT pg_create_logical_replication_slot('txsink_drops', 'pgoutput')", pg, 0, "dropped the replication slot txsink_drops"},
		{"", files, 1, "has no replication slot; drop-slot applies to source.type postgres"},
	}
	for _, s := range steps {
		if s.before != "" {
			src.Exec(t, s.before)
		}
		code, stdout, stderr := runHere(t, "drop-slot", "--config", s.config)
		if code != s.code || !strings.Contains(stdout+stderr, s.want) {
			t.Errorf("drop-slot --config %s: exit %d, %q %q; want exit %d saying %q", filepath.Base(s.config), code, stdout, stderr, s.code, s.want)
		}
	}
	var n int
	if err := src.SQL.QueryRow("SELECT count(*) FROM pg_replication_slots").Scan(&n); err != nil || n != 0 {
		t.Errorf("%d slots left (%v)", n, err)
	}
}
