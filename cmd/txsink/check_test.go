package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/txsink/txsink/internal/testdb"
)

// findingRE matches one finding line of 'txsink check'.
var findingRE = regexp.MustCompile(`^(error|warning|info) +\S.*: .+ Fix: .+$`)

// TestCheckFindings runs 'txsink check' as a process on a target with a
// unique secondary key and a sample with a value its column cannot hold:
// one line per finding and a summary on stdout, the errors again on
// stderr, exit 1; with --sample 0 only the warning remains and it exits 0.
func TestCheckFindings(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t,
			"CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY, email VARCHAR(50) NOT NULL)",
			"CREATE UNIQUE INDEX uq_t_email ON t (email)")
		dir := t.TempDir()
		src := `{"op":"+I","table":"shop.t","row":{"id":1,"email":"a@example.com"}}` + "\n" +
			`{"op":"+I","table":"shop.t","row":{"id":2,"email":null}}` + "\n"
		if err := os.WriteFile(filepath.Join(dir, "p0.jsonl"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := filepath.Join(dir, "pipeline.yaml")
		yaml := "name: diag\nsource:\n  type: file\n  paths: [p0.jsonl]\n  format: txsink-json\n" +
			"target:\n  url: " + strconv.Quote(db.URL) + "\ntables:\n  - source: shop.t\n"
		if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}

		code, stdout, stderr := runTxsink(t, "check", "--config", cfg)
		if code != 1 {
			t.Fatalf("exit code %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
		if len(lines) != 3 {
			t.Fatalf("want two findings and a summary on stdout, got:\n%s", stdout)
		}
		for _, l := range lines[:2] {
			if !findingRE.MatchString(l) {
				t.Errorf("not a finding line: %q", l)
			}
		}
		if !strings.HasPrefix(lines[0], "warning  shop.t -> ") || !strings.Contains(lines[0], "uq_t_email (email)") {
			t.Errorf("first line is not the unique-key warning: %q", lines[0])
		}
		if !strings.HasPrefix(lines[1], "error    shop.t -> ") || !strings.Contains(lines[1], "p0.jsonl:2") || !strings.Contains(lines[1], "column email") {
			t.Errorf("second line is not the NULL error at p0.jsonl:2: %q", lines[1])
		}
		if want := "diag: 1 error, 1 warning, 0 info; "; !strings.HasPrefix(lines[2], want) || !strings.Contains(lines[2], "sampled 2 records (2 changes) of 1 file") {
			t.Errorf("summary %q, want it to start %q and count the sample", lines[2], want)
		}
		if !strings.Contains(stderr, "txsink check: 1 error:\n"+lines[1]) {
			t.Errorf("stderr does not repeat the error:\n%s", stderr)
		}

		code, stdout, stderr = runTxsink(t, "check", "--config", cfg, "--sample", "0")
		if code != 0 {
			t.Fatalf("--sample 0: exit code %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		if !strings.Contains(stdout, "uq_t_email") || !strings.Contains(stdout, "diag: configuration OK; 0 errors, 1 warning") || strings.Contains(stdout, "p0.jsonl") {
			t.Errorf("--sample 0: stdout:\n%s", stdout)
		}
		if stderr != "" {
			t.Errorf("--sample 0: stderr is not empty:\n%s", stderr)
		}

		code, _, stderr = runTxsink(t, "check", "--config", cfg, "--sample", "-1")
		if code != 2 || !strings.Contains(stderr, "--sample -1") {
			t.Errorf("--sample -1: exit code %d, want 2, stderr:\n%s", code, stderr)
		}
	})
}
