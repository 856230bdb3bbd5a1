//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/txsink/txsink/internal/testdb"
)

// TestOpenTransactionAtEnd runs the binary in transaction mode on a
// changelog whose last source transaction has no end mark. The run exits
// 0 and its summary line, and a warning in the log, name the transaction
// left open and where it starts; with --fail-on-open-txn it exits 3 with
// the same on stderr. Neither commits any of it, and once its end is
// appended the next run applies it, read again from the stored progress.
func TestOpenTransactionAtEnd(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, "CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY, v VARCHAR(20) NOT NULL)")
		dir := t.TempDir()
		path := filepath.Join(dir, "p0.jsonl")
		write := func(lines ...string) {
			t.Helper()
			f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
				t.Fatal(err)
			}
		}
		write(`{"op":"+I","table":"shop.t","row":{"id":1,"v":"a"},"txn":"t1","txn_end":true}`,
			`{"op":"+I","table":"shop.t","row":{"id":2,"v":"b"},"txn":"t2"}`,
			`{"op":"+I","table":"shop.t","row":{"id":3,"v":"c"},"txn":"t2"}`)
		cfg := filepath.Join(dir, "pipeline.yaml")
		yaml := "name: opentxn\nsource:\n  type: file\n  paths: [p0.jsonl]\n  format: txsink-json\n" +
			"target:\n  url: " + strconv.Quote(db.URL) + "\ntables:\n  - source: shop.t\n" +
			"sink:\n  transaction.multi-table.enabled: true\n"
		if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		const left = "1 source transaction left open at the end of input, not applied: transaction t2 from p0.jsonl:2 (2 changes); the next run applies it once its end is read"
		rows := func() int {
			t.Helper()
			return count(t, db, "t")
		}

		tests := []struct {
			args   []string
			code   int
			stderr string // besides the log's warning
		}{
			{nil, 0, ""},
			{[]string{"--fail-on-open-txn"}, exitOpenTxn,
				"txsink run: the input ended inside 1 source transaction (--fail-on-open-txn): transaction t2 from p0.jsonl:2 (2 changes); nothing of it is committed, and the next run applies it once its end is read\n"},
		}
		for _, tc := range tests {
			code, stdout, stderr := runTxsink(t, append([]string{"run", "--config", cfg, "--http", "off"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("txsink run %v exited %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.args, code, tc.code, stdout, stderr)
			}
			if !strings.HasPrefix(stdout, "opentxn: ") || !strings.HasSuffix(stdout, "events/s; "+left+"\n") || strings.Count(stdout, "\n") != 1 {
				t.Errorf("txsink run %v: the summary line does not end naming the open transaction:\n%s", tc.args, stdout)
			}
			if !strings.Contains(stderr, "level=WARN msg=\"the input ended inside a source transaction") || !strings.Contains(stderr, "partition=p0.jsonl txn=t2 start=p0.jsonl:2 changes=2") {
				t.Errorf("txsink run %v: no warning naming the open transaction in the log:\n%s", tc.args, stderr)
			}
			if !strings.HasSuffix(stderr, tc.stderr) {
				t.Errorf("txsink run %v: stderr does not end with %q:\n%s", tc.args, tc.stderr, stderr)
			}
			if n := rows(); n != 1 {
				t.Errorf("txsink run %v: %d rows, want t1's alone", tc.args, n)
			}
		}

		write(`{"op":"+I","table":"shop.t","row":{"id":4,"v":"d"},"txn":"t2","txn_end":true}`)
		code, stdout, stderr := runTxsink(t, "run", "--config", cfg, "--http", "off", "--fail-on-open-txn")
		if code != 0 {
			t.Fatalf("txsink run after the end was appended exited %d, want 0\nstderr:\n%s", code, stderr)
		}
		if sum := parseSummary(t, "opentxn", stdout); sum.events != 3 {
			t.Errorf("the rerun read %d events, want t2's 3 again from the stored progress", sum.events)
		}
		if n := rows(); n != 4 {
			t.Errorf("%d rows after the rerun, want all 4", n)
		}
	})
}
