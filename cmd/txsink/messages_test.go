package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/txsink/txsink/internal/golden"
	"github.com/txsink/txsink/internal/testdb"
)

// messageCases are hand-written bad inputs (testdata/messages/*.jsonl, a
// schemaless Debezium changelog of inventory.products) and what check and
// run say about each, kept in golden files so that the messages cannot
// drift: each error names what, where, why and what to do, each once.
var messageCases = []struct {
	name string
	// input is the changelog file under testdata/messages.
	input string
	// tables is the YAML list under "tables:" (default inventory.products).
	tables string
	// setup is SQL run on the target after the schema.
	setup []string
	// run says whether to run the pipeline after check.
	run bool
	// config is YAML added at the pipeline's top level.
	config string
	// deadLetters says whether to list the dead letters after the run.
	deadLetters bool
	// bad are patterns what a person reads must not match.
	bad []string
}{
	{name: "too-many-decimals", input: "too-many-decimals.jsonl", run: true},
	{name: "undecodable", input: "undecodable.jsonl", run: true},
	{name: "precise-decimal", input: "precise-decimal.jsonl", run: true},
	{name: "null", input: "null.jsonl", run: true},
	{name: "missing-table", input: "good.jsonl", tables: "  - source: inventory.products\n  - source: inventory.nope\n", run: true},
	{name: "held-rows", input: "good.jsonl",
		tables: "  - source: inventory.products\n  - source: inventory.other\n",
		setup: []string{"CREATE TABLE other (id INTEGER NOT NULL PRIMARY KEY)", "INSERT INTO other VALUES (1)",
			"INSERT INTO products VALUES (7, 'x', 1, 1, NULL)"}},
	{name: "skipped", input: "skipped.jsonl", run: true},
	// Under dead-letter the summary counts the quarantined records, and
	// their stored reasons say to feed them again (a rerun would not
	// read them), each with the fix its value points to.
	{name: "dead-letter", input: "dead-letter.jsonl", run: true, config: "bad-input: dead-letter\n", deadLetters: true,
		bad: []string{"then run again", "nothing past the last commit", `NULL[^\n]*widen`, `at \$TIME: dead-letter\.jsonl:`}},
}

// elapsedRE finds what differs between runs in a summary line and in the
// dead-letters listing: the time taken, the rate, the time quarantined.
var elapsedRE = regexp.MustCompile(`(?m), [0-9.]+[µmns]+[0-9.µmns]*, [0-9]+ events/s$| at [0-9T:.-]+Z: `)

// TestMessages runs check (and run) on each message case and compares what
// a person reads (check's findings and summary, run's error) with
// testdata/messages/NAME.txt. Run with -update to rewrite them.
func TestMessages(t *testing.T) {
	for _, tc := range messageCases {
		t.Run(tc.name, func(t *testing.T) {
			db := testdb.SQLite(t)
			db.Exec(t, `CREATE TABLE products (id INTEGER NOT NULL PRIMARY KEY, name VARCHAR(10) NOT NULL,
				price NUMERIC(10,2) NOT NULL, quantity INTEGER NOT NULL, note TEXT)`)
			db.Exec(t, tc.setup...)
			cfg := messagePipeline(t, db, tc.input, tc.tables, tc.config)
			var out strings.Builder
			code, stdout, stderr := runInProcess(t, "check", "--config", cfg)
			fmt.Fprintf(&out, "$ txsink check\n%s(exit %d)\n", stdout, code)
			if code != 0 && !strings.HasPrefix(stderr, "txsink check: ") {
				t.Errorf("check's stderr does not start with its errors:\n%s", stderr)
			}
			if tc.run {
				code, stdout, stderr := runInProcess(t, "run", "--config", cfg, "--http", "off")
				said := lastLine(stderr) // the error it stops with
				if code == 0 {
					said = lastLine(stdout) // the summary
				}
				fmt.Fprintf(&out, "\n$ txsink run\n%s\n(exit %d)\n", said, code)
				// The error is said once: not logged (quoted, in a log
				// line), then printed again.
				msg := strings.TrimPrefix(lastLine(stderr), "txsink run: ")
				n := strings.Count(stderr, msg)
				if q := strconv.Quote(msg); q[1:len(q)-1] != msg {
					n += strings.Count(stderr, q[1:len(q)-1])
				}
				if code != 0 && n != 1 {
					t.Errorf("run's stderr holds its error %d times, want once:\n%s", n, stderr)
				}
			}
			if tc.deadLetters {
				code, stdout, stderr := runInProcess(t, "dead-letters", "--config", cfg)
				fmt.Fprintf(&out, "\n$ txsink dead-letters\n%s%s(exit %d)\n", stdout, stderr, code)
			}
			// The target's path is the test's temporary folder.
			got := strings.ReplaceAll(out.String(), filepath.Dir(cfg), "$DIR")
			got = elapsedRE.ReplaceAllStringFunc(got, func(m string) string {
				if strings.HasPrefix(m, " at ") {
					return " at $TIME: "
				}
				return ", $ELAPSED, $RATE events/s"
			})
			for _, bad := range tc.bad {
				if m := regexp.MustCompile(bad).FindString(got); m != "" {
					t.Errorf("what it says matches %q (%q)", bad, m)
				}
			}
			golden.Check(t, filepath.Join("messages", tc.name+".txt"), got)
		})
	}
}

// messagePipeline writes the pipeline of a message case next to db's file
// (so the target URL and the partition read the same in every run) and
// returns its path.
func messagePipeline(t *testing.T, db *testdb.DB, input, tables, extra string) string {
	t.Helper()
	dir := filepath.Dir(strings.TrimPrefix(db.URL, "sqlite://"))
	data, err := os.ReadFile(filepath.Join("testdata", "messages", input))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, input), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if tables == "" {
		tables = "  - source: inventory.products\n"
	}
	yaml := "name: messages\n" + extra + "source:\n  type: file\n  paths: [" + input + "]\n  format: debezium-json\n" +
		"target:\n  url: sqlite://test.db\ntables:\n" + tables
	path := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runInProcess runs the command in this process (as main does, without
// the exit) and returns its exit code, stdout and stderr.
func runInProcess(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// TestCheckErrorsOnceOnOneOutput checks that check, writing stdout and
// stderr to one place (a terminal, 2>&1), prints each error once, and
// twice (the list, then stderr) when they go apart.
func TestCheckErrorsOnceOnOneOutput(t *testing.T) {
	db := testdb.SQLite(t)
	db.Exec(t, `CREATE TABLE products (id INTEGER NOT NULL PRIMARY KEY, name VARCHAR(10) NOT NULL,
		price NUMERIC(10,2) NOT NULL, quantity INTEGER NOT NULL, note TEXT)`)
	cfg := messagePipeline(t, db, "too-many-decimals.jsonl", "", "")
	const finding = "too-many-decimals.jsonl:2: column price"
	tests := []struct {
		name    string
		oneFile bool
		want    int
	}{
		{"stdout and stderr apart", false, 2},
		{"stdout and stderr one file", true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			stdout, err := os.Create(filepath.Join(dir, "stdout"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { stdout.Close() })
			stderr := stdout
			if !tc.oneFile {
				if stderr, err = os.Create(filepath.Join(dir, "stderr")); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { stderr.Close() })
			}
			if code := run([]string{"check", "--config", cfg}, stdout, stderr); code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			var all []byte
			for _, name := range []string{"stdout", "stderr"} {
				b, _ := os.ReadFile(filepath.Join(dir, name))
				all = append(all, b...)
			}
			if n := strings.Count(string(all), finding); n != tc.want {
				t.Errorf("the error is printed %d times, want %d:\n%s", n, tc.want, all)
			}
		})
	}
}
