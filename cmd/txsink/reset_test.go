package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/txsink/txsink/internal/testdb"
)

// eventLines returns txsink-json inserts of the append-only table
// shop.order_events with ids from..to-1.
func eventLines(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, `{"op":"+I","table":"shop.order_events","row":{"event_id":%d,"order_id":1,"kind":"k","at":"2026-12-02T00:00:00Z"}}`+"\n", i)
	}
	return b.String()
}

// eventsConfig writes a pipeline of the append-only table order_events
// over source.paths: paths, and returns its path.
func eventsConfig(t *testing.T, db *testdb.DB, dir, name string, follow bool, paths ...string) string {
	t.Helper()
	cfg := fmt.Sprintf("name: %s\nsource:\n  type: file\n  paths: [%s]\n  format: txsink-json\n  follow: %t\n"+
		"target:\n  url: %s\ntables:\n  - source: shop.order_events\n    append-only: true\nsink:\n  buffer-flush.interval: 50ms\n",
		name, strings.Join(paths, ", "), follow, strconv.Quote(db.URL))
	path := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func createEvents(t *testing.T, db *testdb.DB) {
	t.Helper()
	db.Exec(t, `CREATE TABLE order_events (event_id BIGINT NOT NULL, order_id BIGINT NOT NULL, kind VARCHAR(20) NOT NULL, at VARCHAR(40) NOT NULL)`)
}

// runWithStdin runs the binary with stdin as its standard input.
func runWithStdin(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(txsinkBinary(t), args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TXSINK_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// TestStdinStartsAtItsStart pipes a stream into a pipeline, then a
// different stream, shorter than the first: each run reads its stream from
// the first byte, whatever the last run stored (a byte offset into another
// stream means nothing).
func TestStdinStartsAtItsStart(t *testing.T) {
	txsinkBinary(t)
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		createEvents(t, db)
		dir := t.TempDir()
		cfg := eventsConfig(t, db, dir, "stdin", false, `"-"`)
		for i, stream := range []string{eventLines(0, 40), eventLines(100, 121), eventLines(200, 203)} {
			code, stdout, stderr := runWithStdin(t, stream, "run", "--config", cfg)
			if code != 0 {
				t.Fatalf("run %d: exit %d\n%s\n%s", i+1, code, stdout, tail(stderr))
			}
		}
		if got := count(t, db, "order_events"); got != 40+21+3 {
			t.Errorf("%d rows, want %d: every record of every stream applied once", got, 40+21+3)
		}
	})
}

// TestResetCommand forgets a pipeline's progress: refused while an
// instance runs, a dry run deletes nothing, and after a reset the next run
// reads the files from their start.
func TestResetCommand(t *testing.T) {
	txsinkBinary(t)
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		createEvents(t, db)
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "day1.jsonl"), []byte(eventLines(0, 50)), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := eventsConfig(t, db, dir, "resettable", true, "day1.jsonl")
		p := start(t, "run", "--config", cfg, "--http", "off", "--log-level", "debug")
		p.waitCommits(1)
		code, stdout, stderr := runTxsink(t, "reset", "--config", cfg)
		if code == 0 || !strings.Contains(stderr, `partition "day1.jsonl" of pipeline resettable is held by a running txsink instance; stop it first`) {
			t.Fatalf("reset while running: exit %d\n%s\n%s", code, stdout, stderr)
		}
		p.signal(syscall.SIGINT)
		if code := p.wait(); code != 0 {
			t.Fatalf("run: exit %d\n%s", code, tail(p.Stderr()))
		}
		before := progressRows(t, db, "resettable")
		if before["day1.jsonl"][0] == 0 {
			t.Fatalf("progress %v, want day1.jsonl past its start", before)
		}

		code, stdout, stderr = runTxsink(t, "reset", "--config", cfg, "--partition", "day2.jsonl")
		if code == 0 || !strings.Contains(stderr, `has no stored progress for partition "day2.jsonl"; it has progress for: "day1.jsonl"`) {
			t.Errorf("reset of an unknown partition: exit %d\n%s\n%s", code, stdout, stderr)
		}
		code, stdout, stderr = runTxsink(t, "reset", "--config", cfg, "--dry-run")
		if code != 0 || !strings.Contains(stdout, "resettable: would forget partition day1.jsonl at byte") || !strings.Contains(stdout, "dry run; nothing deleted") {
			t.Errorf("dry run: exit %d\n%s\n%s", code, stdout, stderr)
		}
		if after := progressRows(t, db, "resettable"); after["day1.jsonl"] != before["day1.jsonl"] {
			t.Errorf("the dry run changed progress: %v, was %v", after, before)
		}
		code, stdout, stderr = runTxsink(t, "reset", "--config", cfg, "--partition", "day1.jsonl")
		if code != 0 || !strings.Contains(stdout, "resettable: forgot partition day1.jsonl at byte") {
			t.Fatalf("reset: exit %d\n%s\n%s", code, stdout, stderr)
		}
		if after := progressRows(t, db, "resettable"); len(after) != 0 {
			t.Errorf("progress after reset: %v, want none", after)
		}
		// The next run reads the file from its start: the append-only
		// rows are inserted a second time, as the reset's help says.
		once := eventsConfig(t, db, dir, "resettable", false, "day1.jsonl")
		if code, stdout, stderr := runTxsink(t, "run", "--config", once, "--http", "off"); code != 0 {
			t.Fatalf("run after reset: exit %d\n%s\n%s", code, stdout, tail(stderr))
		}
		if got := count(t, db, "order_events"); got != 100 {
			t.Errorf("%d rows after the run that followed the reset, want 100 (the file read again)", got)
		}
	})
}
