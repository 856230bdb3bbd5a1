//go:build unix

package main

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/txsink/txsink/internal/testdb"
)

// refusalEnv is one refusal case's pipeline: a private database, a
// folder with the config and its source files, and the config's parts,
// which a case's prepare changes before the config is written.
type refusalEnv struct {
	t  *testing.T
	db *testdb.DB
	// dir holds pipeline.yaml and the source files.
	dir string
	// url is target.url; format, paths and tables are source.format,
	// source.paths and the YAML list under tables:; source is more keys of
	// the source section, extra more YAML at the end of the file (a sink:
	// section, say).
	url    string
	format string
	paths  []string
	source string
	tables string
	extra  string
}

// file writes lines, one record each, to the file name in the pipeline's
// folder.
func (e *refusalEnv) file(name string, lines ...string) {
	e.t.Helper()
	data := strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(e.dir, name), []byte(data), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// config writes the pipeline's config and returns its path.
func (e *refusalEnv) config() string {
	e.t.Helper()
	yaml := "name: refusal\nsource:\n  type: file\n  paths: [" + strings.Join(e.paths, ", ") + "]\n  format: " + e.format + "\n" + e.source +
		"target:\n  url: " + strconv.Quote(e.url) + "\ntables:\n" + e.tables + e.extra
	path := filepath.Join(e.dir, "pipeline.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// run runs txsink run on the pipeline as it is now, and fails the test
// unless it exits 0: a case's prepare uses it for a pipeline that has run
// before.
func (e *refusalEnv) run() {
	e.t.Helper()
	if code, stdout, stderr := runTxsink(e.t, "run", "--config", e.config(), "--http", "off"); code != 0 {
		e.t.Fatalf("the first run exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// goodRecord is an insert of shop.t that the default pipeline applies.
const goodRecord = `{"op":"+I","table":"shop.t","row":{"id":1,"v":"a"}}`

// startupRefusals lists what txsink run refuses to start with, or stops
// at before it commits anything, as found in engine.New, the start of
// engine.Run, cmd/txsink/run.go and config validation. For each, txsink
// check must report an error and exit 1: a check that passes is a promise
// that the run will not refuse. Add a case here with every new refusal.
//
// Each case starts from a pipeline that works: target table t (id BIGINT
// primary key, v VARCHAR(20) NULL) in a private database, source p0.jsonl
// holding goodRecord in txsink-json, tables entry shop.t. prepare breaks
// it. want is text that run's error and check's errors must both hold;
// runWant and checkWant are more text for one of them.
var startupRefusals = []struct {
	name      string
	dialects  []string // nil: every dialect
	prepare   func(e *refusalEnv)
	want      []string
	runWant   []string
	checkWant []string
}{
	{
		name:    "invalid config",
		prepare: func(e *refusalEnv) { e.extra = "sink:\n  buffer-flush.max-rowz: 10\n" },
		want:    []string{"buffer-flush.max-rowz", "buffer-flush.max-rows"},
	},
	{
		name:    "unknown format option",
		prepare: func(e *refusalEnv) { e.source = "  format-options: {txsink.nope: x}\n" },
		want:    []string{"unknown format option", "txsink.nope"},
	},
	{
		name:     "unreachable server",
		dialects: []string{"mysql", "postgres"},
		prepare: func(e *refusalEnv) {
			u, err := url.Parse(e.url)
			if err != nil {
				e.t.Fatal(err)
			}
			u.Host = "127.0.0.1:1" // where nothing listens
			e.url = u.String()
			e.extra = "startup-timeout: 1s\n"
		},
		want:    []string{"127.0.0.1:1", "connection refused"},
		runWant: []string{"the target database did not answer within startup-timeout (1s, ", "check that the server runs"},
	},
	{
		name:     "SQLite file in a folder that does not exist",
		dialects: []string{"sqlite"},
		prepare:  func(e *refusalEnv) { e.url = "sqlite://" + filepath.Join(e.dir, "no-such-folder", "target.db") },
		want:     []string{"no-such-folder"},
	},
	{
		name: "unknown table",
		prepare: func(e *refusalEnv) {
			e.file("p0.jsonl", goodRecord, `{"op":"+I","table":"shop.refunds","row":{"id":7}}`)
		},
		want: []string{"shop.refunds", "p0.jsonl:2"},
	},
	{
		name:    "missing target table",
		prepare: func(e *refusalEnv) { e.tables += "  - source: shop.absent_t\n" },
		want:    []string{"absent_t"},
	},
	{
		name:    "key mismatch",
		prepare: func(e *refusalEnv) { e.tables = "  - source: shop.t\n    primary-key: [v]\n" },
		want:    []string{"primary-key [v]", "PRIMARY KEY [id]"},
	},
	{
		name: "table without a key, not append-only",
		prepare: func(e *refusalEnv) {
			e.db.Exec(e.t, "CREATE TABLE nokey (id BIGINT NULL, v VARCHAR(20) NULL)")
			e.tables += "  - source: shop.nokey\n"
		},
		want: []string{"nokey", "append-only"},
	},
	{
		name:     "key column under a collation txsink cannot reproduce",
		dialects: []string{"mysql", "postgres"},
		prepare: func(e *refusalEnv) {
			if e.db.Dialect == "mysql" {
				e.db.Exec(e.t, "CREATE TABLE codes (code VARCHAR(20) COLLATE utf8mb4_unicode_ci NOT NULL PRIMARY KEY)")
			} else {
				e.db.Exec(e.t, "CREATE COLLATION nd (provider = icu, locale = 'und-u-ks-level2', deterministic = false)",
					"CREATE TABLE codes (code VARCHAR(20) COLLATE nd NOT NULL PRIMARY KEY)")
			}
			e.tables += "  - source: shop.codes\n"
		},
		want: []string{"key column code compares by collation", "cannot reproduce", "binary collation"},
	},
	{
		name:    "route to txsink's own table",
		prepare: func(e *refusalEnv) { e.tables = "  - source: shop.t\n    target: txsink_progress\n" },
		want:    []string{"txsink_progress", "one of txsink's own tables"},
	},
	{
		name:    "missing source file",
		prepare: func(e *refusalEnv) { e.paths = append(e.paths, "day2.jsonl") },
		want:    []string{"day2.jsonl", "no such file"},
	},
	{
		name: "source shorter than its stored progress",
		prepare: func(e *refusalEnv) {
			e.run()
			e.file("p0.jsonl", "") // truncated under its progress
		},
		want: []string{"partition p0.jsonl", "cannot be trusted", "shorter than the position", "txsink reset --config"},
	},
	{
		name: "source replaced under its stored position",
		prepare: func(e *refusalEnv) {
			e.run()
			e.file("p0.jsonl", strings.Replace(goodRecord, `"v":"a"`, `"v":"b"`, 1)) // as long, other bytes
		},
		want: []string{"partition p0.jsonl", "cannot be trusted", "txsink reset --config"},
	},
	{
		// Two spellings config validation cannot tell apart: a symbolic
		// link to the file.
		name: "one file listed twice",
		prepare: func(e *refusalEnv) {
			if err := os.Symlink("p0.jsonl", filepath.Join(e.dir, "alias.jsonl")); err != nil {
				e.t.Fatal(err)
			}
			e.paths = append(e.paths, "alias.jsonl")
		},
		want: []string{"alias.jsonl", "are the same file", "list it once"},
	},
	{
		name: "progress of a partition this configuration does not read",
		prepare: func(e *refusalEnv) {
			e.run()
			e.file("q0.jsonl", goodRecord)
			e.paths = []string{"q0.jsonl"}
		},
		want: []string{"partition p0.jsonl", "which this configuration does not read", "txsink reset --config"},
	},
	{
		name:      "NOT NULL column never sent",
		prepare:   func(e *refusalEnv) { e.db.Exec(e.t, "ALTER TABLE t ADD COLUMN note VARCHAR(20) NOT NULL") },
		want:      []string{"note"},
		checkWant: []string{"column note is NOT NULL without a default"},
	},
	{
		name: "NOT NULL column the Debezium schema lacks",
		prepare: func(e *refusalEnv) {
			e.db.Exec(e.t, "ALTER TABLE t ADD COLUMN note VARCHAR(20) NOT NULL")
			e.format = "debezium-json"
			e.file("p0.jsonl", `{"schema":{"type":"struct","fields":[`+
				`{"type":"struct","fields":[{"type":"int64","field":"id"},{"type":"string","optional":true,"field":"v"}],"optional":true,"field":"before"},`+
				`{"type":"struct","fields":[{"type":"int64","field":"id"},{"type":"string","optional":true,"field":"v"}],"optional":true,"field":"after"},`+
				`{"type":"struct","fields":[],"field":"source"},{"type":"string","field":"op"}]},`+
				`"payload":{"before":null,"after":{"id":1,"v":"a"},"source":{"db":"shop","table":"t"},"op":"c","ts_ms":1}}`)
		},
		want:      []string{"note"},
		checkWant: []string{"column note is NOT NULL without a default", "nor does the schema"},
	},
	{
		name: "NULL into a NOT NULL column",
		prepare: func(e *refusalEnv) {
			e.db.Exec(e.t, "ALTER TABLE t ADD COLUMN w VARCHAR(20) NOT NULL DEFAULT 'x'")
			e.file("p0.jsonl", `{"op":"+I","table":"shop.t","row":{"id":1,"v":"a","w":null}}`)
		},
		want: []string{"p0.jsonl:1", "column w"},
	},
	{
		name:    "change without its key",
		prepare: func(e *refusalEnv) { e.file("p0.jsonl", `{"op":"+I","table":"shop.t","row":{"v":"a"}}`) },
		want:    []string{"p0.jsonl:1", "id"},
	},
	{
		name: "update of an append-only table",
		prepare: func(e *refusalEnv) {
			e.db.Exec(e.t, "CREATE TABLE events (id BIGINT NULL, v VARCHAR(20) NULL)")
			e.tables += "  - source: shop.events\n    append-only: true\n"
			e.file("p0.jsonl", goodRecord, `{"op":"-D","table":"shop.events","row":{"id":1}}`)
		},
		want: []string{"p0.jsonl:2", "append-only"},
	},
}

// TestCheckRefusesWhatRunRefuses runs txsink check and txsink run, the
// real binary, on each of startupRefusals on every server: run must exit
// 1 naming the case's cause, and check must exit 1 with the same cause
// among its errors (never "configuration OK"). The unbroken pipeline
// passes both, so that neither exit is the harness's.
func TestCheckRefusesWhatRunRefuses(t *testing.T) {
	txsinkBinary(t) // build (or skip) before the servers are set up
	for _, dialect := range testdb.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Run("unbroken", func(t *testing.T) {
				e := newRefusalEnv(t, dialect)
				cfg := e.config()
				if code, stdout, stderr := runTxsink(t, "check", "--config", cfg); code != 0 || !strings.Contains(stdout, "refusal: configuration OK") {
					t.Fatalf("txsink check on the unbroken pipeline exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
				}
				e.run()
			})
			for _, tc := range startupRefusals {
				if tc.dialects != nil && !slices.Contains(tc.dialects, dialect) {
					continue
				}
				t.Run(tc.name, func(t *testing.T) {
					e := newRefusalEnv(t, dialect)
					tc.prepare(e)
					cfg := e.config()

					code, stdout, stderr := runTxsink(t, "check", "--config", cfg)
					if code != 1 || strings.Contains(stdout, "configuration OK") {
						t.Errorf("txsink check exited %d, want 1 with an error\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
					}
					errs := checkErrors(stdout, stderr)
					for _, w := range append(slices.Clone(tc.want), tc.checkWant...) {
						if !strings.Contains(errs, w) {
							t.Errorf("txsink check's errors do not hold %q:\n%s", w, errs)
						}
					}

					code, _, stderr = runTxsink(t, "run", "--config", cfg, "--http", "off")
					msg := lastLine(stderr)
					if code != 1 || !strings.HasPrefix(msg, "txsink run: ") {
						t.Fatalf("txsink run exited %d, want 1 with its error last\nstderr:\n%s", code, tail(stderr))
					}
					for _, w := range append(slices.Clone(tc.want), tc.runWant...) {
						if !strings.Contains(msg, w) {
							t.Errorf("txsink run's error does not hold %q:\n%s", w, msg)
						}
					}
				})
			}
		})
	}
}

// newRefusalEnv returns the unbroken pipeline of startupRefusals on a
// private database of dialect.
func newRefusalEnv(t *testing.T, dialect string) *refusalEnv {
	t.Helper()
	e := &refusalEnv{t: t, db: testdb.Open(t, dialect), dir: t.TempDir(), format: "txsink-json",
		paths: []string{"p0.jsonl"}, tables: "  - source: shop.t\n"}
	e.url = e.db.URL
	e.db.Exec(t, "CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY, v VARCHAR(20) NULL)")
	e.file("p0.jsonl", goodRecord)
	return e
}

// checkErrors returns what txsink check said was wrong: its error lines,
// or the error it stopped with, which it prints on stderr either way.
func checkErrors(stdout, stderr string) string {
	var lines []string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "error ") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n") + "\n" + stderr
}
