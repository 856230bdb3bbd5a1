package main

import (
	"bytes"
	"fmt"
	"github.com/txsink/txsink/sink"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/txsink/txsink/internal/benchrun"
	"github.com/txsink/txsink/internal/testdb"
)

// TestBenchSQLite runs each bench workload, tiny, on SQLite and checks that
// every figure is reported and the final state verified. It checks no
// speed: figures on a shared machine mean nothing in a unit test.
func TestBenchSQLite(t *testing.T) {
	for _, w := range []string{"insert-only", "update-heavy", "txn"} {
		t.Run(w, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run([]string{"bench", "--workload", w, "--orders", "40", "--partitions", "2", "--dir", t.TempDir()}, &out, &errOut)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
			}
			for _, label := range []string{"input events/s", "rows written/s", "bulk load", "bulk in commits", "rows/s ÷ bulk", "events/s ÷ bulk", "÷ bulk in commits",
				"peak RSS", "commits", "commit latency", "p50", "p99", "verified"} {
				if !strings.Contains(out.String(), label) {
					t.Errorf("output lacks %q:\n%s", label, out.String())
				}
			}
			if strings.Contains(out.String(), "NaN") || strings.Contains(out.String(), "Inf") {
				t.Errorf("a figure is not a number:\n%s", out.String())
			}
		})
	}
}

// TestBenchRounds repeats a bench: every round starts from emptied tables
// (so each verifies, and each bulk load finds an empty copy), and the
// figures come as medians with their ranges.
func TestBenchRounds(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"bench", "--workload", "update-heavy", "--orders", "30", "--rounds", "3", "--dir", t.TempDir()}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if n := strings.Count(errOut.String(), "checking the target against the final state"); n != 3 {
		t.Errorf("%d rounds checked the final state, want 3:\n%s", n, errOut.String())
	}
	// The labels are padded to the longest one: match any run of spaces.
	for _, want := range []string{`rounds +3,`, `each round +events/s ÷ bulk `, `every round`, `\] \(`} {
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Count(strings.SplitAfter(out.String(), "each round")[1], ".") < 3 {
		t.Errorf("the per-round ratios are not three:\n%s", out.String())
	}
}

// TestBenchBothModes runs plain and transaction mode one after the other
// in each round, taking turns to go first: both verify, and their events/s
// are compared round by round.
func TestBenchBothModes(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"bench", "--workload", "txn", "--orders", "40", "--mode", "both", "--rounds", "2", "--dir", t.TempDir()}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	for _, want := range []string{"plain mode, flush", "transaction mode, flush", "transaction ÷ plain  events/s ", ", each round "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if n := strings.Count(out.String(), "verified: the target equals the workload's final state, every round"); n != 2 {
		t.Errorf("%d modes verified every round, want 2:\n%s", n, out.String())
	}
	var order []string
	for _, line := range strings.Split(errOut.String(), "\n") {
		if strings.HasPrefix(line, "txsink bench: round ") {
			order = append(order, strings.TrimPrefix(line, "txsink bench: "))
		}
	}
	want := []string{"round 1 of 2, plain mode", "round 1 of 2, transaction mode", "round 2 of 2, transaction mode", "round 2 of 2, plain mode"}
	if !slices.Equal(order, want) {
		t.Errorf("rounds ran in the order %q, want %q", order, want)
	}
}

// TestBenchSideBySide runs two benches at once against one database: each
// writes tables of its own, so both verify their final state, and neither
// leaves a table behind.
func TestBenchSideBySide(t *testing.T) {
	for _, dialect := range []string{"mysql", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			db := testdb.Open(t, dialect)
			var wg sync.WaitGroup
			outs := make([]bytes.Buffer, 2)
			codes := make([]int, 2)
			for i := range 2 {
				wg.Go(func() {
					var errOut bytes.Buffer
					codes[i] = run([]string{"bench", "--workload", "update-heavy", "--orders", "300", "--target", db.URL, "--dir", t.TempDir()}, &outs[i], &errOut)
					outs[i].Write(errOut.Bytes())
				})
			}
			wg.Wait()
			for i := range 2 {
				if codes[i] != 0 || !strings.Contains(outs[i].String(), "verified: the target equals") {
					t.Errorf("bench %d: exit %d\n%s", i, codes[i], outs[i].String())
				}
				// A server on this host that the bench can tell apart
				// (CI's always is) has its CPU time reported.
				if !benchrun.LocalTarget(db.URL) || runtime.GOOS != "linux" {
					continue
				}
				switch pid := benchrun.FindServer(t.Context(), db.SQL, dialect, db.URL); {
				case pid == 0 && os.Getenv("CI") == "true":
					t.Errorf("the bench did not find the %s server on this host", dialect)
				case pid != 0 && !regexp.MustCompile(`database CPU +\S+ \(\S+ cores\) in txsink's run, \S+ \(\S+ cores\) in the bulk load \(the server's process `+strconv.Itoa(pid)).MatchString(outs[i].String()):
					t.Errorf("bench %d reports no database CPU for process %d:\n%s", i, pid, outs[i].String())
				}
			}
			var left int
			schema := "DATABASE()"
			if dialect == "postgres" {
				schema = "current_schema()"
			}
			q := "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = " + schema + " AND table_name LIKE 'txsink\\_b%'"
			if err := db.SQL.QueryRow(q).Scan(&left); err != nil {
				t.Fatal(err)
			}
			if left != 0 {
				t.Errorf("%d bench tables left behind", left)
			}
		})
	}
}

// TestBenchLeavesDatabase checks that a bench leaves the database as it
// found it: without a progress table it drops the one the engine created;
// with one, it keeps it and the rows of other pipelines, removing its own.
func TestBenchLeavesDatabase(t *testing.T) {
	for _, dialect := range []string{"mysql", "postgres", "sqlite"} {
		for _, had := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/had-progress-%v", dialect, had), func(t *testing.T) {
				db := testdb.Open(t, dialect)
				if had {
					// Another pipeline's progress, through the engine's
					// own setup, so the table is the one txsink makes.
					tdb, err := sink.Open(t.Context(), db.URL, t.TempDir())
					if err != nil {
						t.Fatal(err)
					}
					err = tdb.Setup(t.Context())
					tdb.Close()
					if err != nil {
						t.Fatal(err)
					}
					db.Exec(t, "INSERT INTO txsink_progress (pipeline, source_partition, position, seq) VALUES ('other', 'a.jsonl', 10, 1)")
				}
				before := benchTables(t, db)
				var out, errOut bytes.Buffer
				if code := run([]string{"bench", "--workload", "insert-only", "--orders", "20", "--target", db.URL, "--dir", t.TempDir()}, &out, &errOut); code != 0 {
					t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
				}
				if after := benchTables(t, db); !slices.Equal(after, before) {
					t.Errorf("tables before the bench %v, after %v", before, after)
				}
				if had {
					var n int
					if err := db.SQL.QueryRow("SELECT COUNT(*) FROM txsink_progress WHERE pipeline = 'other'").Scan(&n); err != nil || n != 1 {
						t.Errorf("the other pipeline's progress: %d rows (%v), want 1", n, err)
					}
				}
			})
		}
	}
}

// benchTables lists the tables of db's database, sorted.
func benchTables(t *testing.T, db *testdb.DB) []string {
	t.Helper()
	q := map[string]string{
		"mysql":    "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()",
		"postgres": "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()",
		"sqlite":   "SELECT name FROM sqlite_master WHERE type = 'table'",
	}[db.Dialect]
	rows, err := db.SQL.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

// TestBenchProfiles: --cpuprofile, --memprofile and --trace write what
// pprof and go tool trace read (gzip-compressed profiles, a trace with
// its header), and the report names the profiles.
func TestBenchProfiles(t *testing.T) {
	dir := t.TempDir()
	cpu, mem, tr := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof"), filepath.Join(dir, "run.trace")
	var out, errOut bytes.Buffer
	code := run([]string{"bench", "--workload", "insert-only", "--orders", "40", "--dir", t.TempDir(),
		"--cpuprofile", cpu, "--memprofile", mem, "--trace", tr}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	for path, magic := range map[string]string{cpu: "\x1f\x8b", mem: "\x1f\x8b", mem + ".before": "\x1f\x8b", tr: "go 1."} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(data), magic) {
			t.Errorf("%s starts with %q, want %q", filepath.Base(path), data[:min(len(data), 8)], magic)
		}
	}
	for _, want := range []string{"cpu profile", cpu, "allocations", "-diff_base " + mem + ".before " + mem} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestBenchForeignKeys runs --foreign-keys on each server: with both, the
// txn and insert-only workloads verify their final state in every round
// with the constraints and without, the ratio is printed and the database
// is left as found; with on and --keep, the kept tables hold the two
// foreign keys (items to orders, notes to items), so txsink's ordering had
// real constraints to keep.
func TestBenchForeignKeys(t *testing.T) {
	for _, dialect := range []string{"mysql", "postgres", "sqlite"} {
		t.Run(dialect, func(t *testing.T) {
			db := testdb.Open(t, dialect)
			before := benchTables(t, db)
			for _, w := range []string{"txn", "insert-only"} {
				var out, errOut bytes.Buffer
				if code := run([]string{"bench", "--workload", w, "--orders", "60", "--foreign-keys", "both", "--rounds", "2", "--target", db.URL, "--dir", t.TempDir()}, &out, &errOut); code != 0 {
					t.Fatalf("%s: exit %d\n%s%s", w, code, out.String(), errOut.String())
				}
				for _, want := range []string{"foreign keys off, flush", "foreign keys on, flush", "into copies without the foreign keys", "foreign keys on ÷ off, "} {
					if !strings.Contains(out.String(), want) {
						t.Errorf("%s: output lacks %q:\n%s", w, want, out.String())
					}
				}
				if n := strings.Count(out.String(), "verified: the target equals the workload's final state, every round"); n != 2 {
					t.Errorf("%s: %d variants verified every round, want 2:\n%s", w, n, out.String())
				}
			}
			if after := benchTables(t, db); !slices.Equal(after, before) {
				t.Errorf("tables before the benches %v, after %v", before, after)
			}

			var out, errOut bytes.Buffer
			if code := run([]string{"bench", "--workload", "txn", "--orders", "30", "--foreign-keys", "on", "--keep", "--target", db.URL, "--dir", t.TempDir()}, &out, &errOut); code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
			}
			m := regexp.MustCompile(`kept the tables (txsink_bench_\w+_)\*`).FindStringSubmatch(errOut.String())
			if m == nil {
				t.Fatalf("no kept tables named:\n%s", errOut.String())
			}
			prefix := m[1]
			t.Cleanup(func() {
				for _, tb := range []string{"item_notes", "order_items", "orders"} {
					for _, p := range []string{prefix, strings.Replace(prefix, "txsink_bench_", "txsink_bulk_", 1)} {
						db.Exec(t, "DROP TABLE IF EXISTS "+p+tb)
					}
				}
			})
			if got := foreignKeyCount(t, db, prefix); got != 2 {
				t.Errorf("the kept tables %s* have %d foreign keys, want 2", prefix, got)
			}
		})
	}
}

// foreignKeyCount counts the foreign keys of the bench's linked tables of
// prefix, from db's catalog.
func foreignKeyCount(t *testing.T, db *testdb.DB, prefix string) int {
	t.Helper()
	total := 0
	for _, tb := range []string{"orders", "order_items", "item_notes"} {
		q := map[string]string{
			"mysql":    "SELECT COUNT(*) FROM information_schema.referential_constraints WHERE constraint_schema = DATABASE() AND table_name = ?",
			"postgres": "SELECT COUNT(*) FROM pg_catalog.pg_constraint WHERE contype = 'f' AND conrelid = to_regclass($1)",
			"sqlite":   "SELECT COUNT(DISTINCT id) FROM pragma_foreign_key_list(?)",
		}[db.Dialect]
		var n int
		if err := db.SQL.QueryRow(q, prefix+tb).Scan(&n); err != nil {
			t.Fatalf("count the foreign keys of %s: %v", prefix+tb, err)
		}
		total += n
	}
	return total
}
