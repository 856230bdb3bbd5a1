package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"

	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
)

// interruptedRE matches the one-line summary of a run a signal stopped
// before the end of its files.
var interruptedRE = regexp.MustCompile(`^interrupted: interrupted at (\d+)%, a rerun resumes; \d+ events`)

// TestInterruptedSummary sends SIGINT to a run of files after its first
// commit (one row per commit, so it cannot reach the end first): its
// summary must say how far it got and that a rerun resumes, not "done";
// the rerun then ends without saying it was interrupted.
func TestInterruptedSummary(t *testing.T) {
	txsinkBinary(t)
	db := testdb.SQLite(t)
	db.Exec(t, workload.Schema("sqlite")...)
	dir := filepath.Dir(db.URL[len("sqlite://"):])
	if _, err := generateDemo(dir, []string{"p0.jsonl"}, 2000, newStatusLine(io.Discard)); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "pipeline.yaml")
	yaml := "name: interrupted\nsource:\n  type: file\n  paths: [p0.jsonl]\n  format: txsink-json\n" +
		"target:\n  url: sqlite://" + filepath.Base(db.URL) + "\ntables:\n  - source: shop.orders\n" +
		"  - source: shop.order_items\n    primary-key: [order_id, line_no]\n  - source: shop.order_events\n    append-only: true\n" +
		"sink:\n  buffer-flush.max-rows: 1\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}

	p := start(t, "run", "--config", cfg, "--log-level", "debug", "--http", "off")
	p.waitCommits(1)
	p.signal(syscall.SIGINT)
	if code := p.wait(); code != 0 {
		t.Fatalf("txsink run after SIGINT exited %d, want 0\nstderr:\n%s", code, tail(p.Stderr()))
	}
	m := interruptedRE.FindStringSubmatch(p.Stdout())
	if m == nil {
		t.Fatalf("the summary after SIGINT does not say it was interrupted:\n%s", p.Stdout())
	}
	if pct, _ := strconv.Atoi(m[1]); pct >= 100 {
		t.Errorf("interrupted at %d%%, want less than 100%%", pct)
	}

	code, stdout, stderr := runTxsink(t, "run", "--config", cfg, "--http", "off")
	if code != 0 {
		t.Fatalf("the rerun exited %d\nstderr:\n%s", code, tail(stderr))
	}
	if interruptedRE.MatchString(stdout) {
		t.Errorf("the rerun, which reached the end, says it was interrupted:\n%s", stdout)
	}
	parseSummary(t, "interrupted", stdout)
}
