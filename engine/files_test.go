package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/source/file"
)

// kvLine is one txsink-json change of table shop.kv.
func kvLine(op string, id int, v string) string {
	if op == "-D" {
		return fmt.Sprintf(`{"op":"-D","table":"shop.kv","row":{"id":%d}}`, id)
	}
	return fmt.Sprintf(`{"op":%q,"table":"shop.kv","row":{"id":%d,"v":%q}}`, op, id, v)
}

// writeLines writes lines, one per line, to dir/name and returns the path.
func writeLines(t *testing.T, dir, name string, lines []string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// kvPipeline is a pipeline of table shop.kv over paths, read as source.paths
// (one partition).
func kvPipeline(db *testdb.DB, name string, paths ...string) *config.Config {
	cfg := pipeline(db, config.Table{Source: "shop.kv"})
	cfg.Name = name
	cfg.Source.Set("paths", paths)
	return cfg
}

func createKV(t *testing.T, db *testdb.DB) {
	t.Helper()
	db.Exec(t, `CREATE TABLE kv (id INT NOT NULL PRIMARY KEY, v VARCHAR(20))`)
}

// TestSequenceOfFiles applies one key's changes spread over the files of
// one partition (source.paths): inserts in the first half of the files,
// updates (or deletes) of the same keys in the second half, at every flush
// size from one row to all. The files are read one after another, so the
// target always ends as the replay: every key at its last value, or gone.
func TestSequenceOfFiles(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		createKV(t, db)
		for _, files := range []int{2, 8, 64} {
			for _, sz := range daySizes[files] {
				for _, last := range []string{"+U", "-D"} {
					paths := dayFiles(t, t.TempDir(), files, sz.keys, last)
					for _, flush := range sz.flush {
						for _, txn := range []bool{false, true} {
							if txn && flush != 0 && flush < 50 {
								continue // transaction mode commits per source transaction already
							}
							name := fmt.Sprintf("files%d-keys%d-%s-flush%d-txn%v", files, sz.keys, map[string]string{"+U": "update", "-D": "delete"}[last], flush, txn)
							t.Run(name, func(t *testing.T) {
								db.Exec(t, "DELETE FROM kv")
								cfg := kvPipeline(db, name, paths...)
								cfg.Sink.FlushMaxRows = cmpOr(flush, 1<<30)
								cfg.Sink.FlushMaxBytes = 1 << 40
								if txn {
									txnPipeline(cfg)
								}
								if r := runPipeline(t, cfg); r.err != nil {
									t.Fatal(r.err)
								}
								want := fmt.Sprint(sz.keys)
								if last == "-D" {
									want = "0"
								}
								if got := query(t, db, "SELECT COUNT(*) FROM kv WHERE v = 'day2'"); last == "+U" && got != want {
									t.Errorf("%s rows at their day-2 value, want %s; rows still at day 1: %s", got, want,
										query(t, db, "SELECT COUNT(*) FROM kv WHERE v = 'day1'"))
								}
								if got := query(t, db, "SELECT COUNT(*) FROM kv"); last == "-D" && got != "0" {
									t.Errorf("%s rows left, want 0 (every key was deleted in a later file)", got)
								}
								if got := query(t, db, "SELECT COUNT(*) FROM txsink_progress WHERE pipeline = '"+cfg.Name+"'"); got != "1" {
									t.Errorf("%s progress rows, want 1: the files are one partition", got)
								}
							})
						}
					}
				}
			}
		}
	})
}

// daySize is a size of the day-by-day layout: keys, and the flush sizes
// to run it at (buffer-flush.max-rows; 0: all in one flush).
type daySize struct {
	keys  int
	flush []int
}

// daySizes are the sizes of the day-by-day layout per number of files.
var daySizes = map[int][]daySize{
	// The day1/day2 layout at the size it was found at.
	2:  {{keys: 20000, flush: []int{1000, 0}}, {keys: 120, flush: []int{1, 7, 50}}},
	8:  {{keys: 2000, flush: []int{500, 0}}, {keys: 120, flush: []int{1, 7, 50}}},
	64: {{keys: 2000, flush: []int{500, 0}}, {keys: 128, flush: []int{1, 7, 50}}},
}

// dayFiles writes the day-by-day layout into files files in dir: the
// inserts of keys keys in the first half of the files, their last change
// (last: +U or -D) in the second half, and returns the paths in order.
func dayFiles(t *testing.T, dir string, files, keys int, last string) []string {
	t.Helper()
	half := files / 2
	lines := make([][]string, files)
	for k := 0; k < keys; k++ {
		lines[k%half] = append(lines[k%half], kvLine("+I", k, "day1"))
		lines[half+k%half] = append(lines[half+k%half], kvLine(last, k, "day2"))
	}
	var paths []string
	for i := range lines {
		paths = append(paths, writeLines(t, dir, fmt.Sprintf("day%02d.jsonl", i+1), lines[i]))
	}
	return paths
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// TestResumeAcrossFiles stops a pipeline of three files at every commit
// and runs it again with the same and with more files listed: what was
// applied is never applied again, and nothing is skipped.
func TestResumeAcrossFiles(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, `CREATE TABLE ev (id INT NOT NULL, v VARCHAR(20))`)
		dir := t.TempDir()
		line := func(i int) string { return fmt.Sprintf(`{"op":"+I","table":"shop.ev","row":{"id":%d,"v":"x"}}`, i) }
		var paths []string
		n := 0
		for f := 0; f < 3; f++ {
			var ls []string
			for i := 0; i < 10; i++ {
				ls = append(ls, line(n))
				n++
			}
			paths = append(paths, writeLines(t, dir, fmt.Sprintf("f%d.jsonl", f), ls))
		}
		cfg := pipeline(db, config.Table{Source: "shop.ev", AppendOnly: true})
		cfg.Name = "resume-files"
		cfg.Sink.FlushMaxRows = 4
		// Run 1 lists the first file; run 2 the first two, stopped after
		// one commit; run 3 all three.
		cfg.Source.Set("paths", paths[:1])
		if r := runPipeline(t, cfg); r.err != nil {
			t.Fatal(r.err)
		}
		cfg.Source.Set("paths", paths[:2])
		stop := errors.New("stop")
		commits := 0
		e := newEngine(t, cfg, engine.WithBeforeCommitHook(func(*commit.Unit) error {
			if commits++; commits == 2 {
				return stop
			}
			return nil
		}))
		if err := e.Run(context.Background(), engine.RunOptions{}); !errors.Is(err, stop) {
			t.Fatalf("run 2 = %v, want the hook's stop", err)
		}
		e.Close()
		cfg.Source.Set("paths", paths)
		if r := runPipeline(t, cfg); r.err != nil {
			t.Fatal(r.err)
		}
		if got := query(t, db, "SELECT COUNT(*), COUNT(DISTINCT id) FROM ev"); got != "30|30" {
			t.Errorf("rows, distinct ids = %s, want 30|30 (each line applied once)", got)
		}
	})
}

// TestReplacedFileRefused replaces a file under its name while the
// pipeline is stopped, rotates it by rename, and truncates and refills it:
// each time the next run refuses the stored position, naming the
// partition and the reset command, and writes nothing.
func TestReplacedFileRefused(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, path string)
		want   string
	}{
		{"replaced by a longer file", func(t *testing.T, path string) {
			var ls []string
			for i := 0; i < 1500; i++ {
				ls = append(ls, kvLine("+I", 5000+i, "new"))
			}
			writeLines(t, filepath.Dir(path), filepath.Base(path), ls)
		}, "changed since it was recorded: its first 4096 bytes are not the ones read before"},
		{"rotated by rename, a new file under the name", func(t *testing.T, path string) {
			if err := os.Rename(path, path+".1"); err != nil {
				t.Fatal(err)
			}
			var ls []string
			for i := 0; i < 2000; i++ {
				ls = append(ls, kvLine("+I", 5000+i, "new"))
			}
			writeLines(t, filepath.Dir(path), filepath.Base(path), ls)
		}, "changed since it was recorded"},
		{"truncated", func(t *testing.T, path string) {
			if err := os.Truncate(path, 100); err != nil {
				t.Fatal(err)
			}
		}, "shorter than the position"},
	}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		createKV(t, db)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				db.Exec(t, "DELETE FROM kv")
				var ls []string
				for i := 0; i < 1000; i++ {
					ls = append(ls, kvLine("+I", i, "old"))
				}
				path := writeLines(t, t.TempDir(), "orders.jsonl", ls)
				cfg := kvPipeline(db, "replaced-"+strings.ReplaceAll(tt.name[:8], " ", "-"), path)
				if r := runPipeline(t, cfg); r.err != nil {
					t.Fatal(r.err)
				}
				tt.change(t, path)
				e, err := engine.New(context.Background(), cfg, engine.WithConfigFile("/etc/txsink/orders.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				err = e.Run(context.Background(), engine.RunOptions{})
				if !errors.Is(err, file.ErrFileChanged) {
					t.Fatalf("run after the change = %v, want ErrFileChanged", err)
				}
				for _, w := range []string{"partition " + path + ": the stored position", tt.want,
					"txsink reset --config /etc/txsink/orders.yaml --partition " + path} {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q\nlacks %q", err, w)
					}
				}
				if got := query(t, db, "SELECT COUNT(*) FROM kv WHERE v = 'old'"); got != "1000" {
					t.Errorf("%s rows as first applied, want 1000: the refused run wrote", got)
				}
			})
		}
	})
}

// TestSameFileTwice lists one file twice, through a symbolic link and a
// hard link: refused at start, nothing written.
func TestSameFileTwice(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		createKV(t, db)
		dir := t.TempDir()
		a := writeLines(t, dir, "a.jsonl", []string{kvLine("+I", 1, "a")})
		if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		sym := filepath.Join(dir, "sub", "link.jsonl")
		if err := os.Symlink(a, sym); err != nil {
			t.Fatal(err)
		}
		hard := filepath.Join(dir, "hard.jsonl")
		if err := os.Link(a, hard); err != nil {
			t.Fatal(err)
		}
		for _, layout := range [][][]string{{{a}, {sym}}, {{a, hard}}} {
			cfg := kvPipeline(db, "twice")
			cfg.Source.Set("paths", []string(nil))
			cfg.Source.Set("partitions", layout)
			r := runPipeline(t, cfg)
			if r.err == nil || !strings.Contains(r.err.Error(), "are the same file: it would be applied twice") {
				t.Errorf("%v: run = %v, want the same-file refusal", layout, r.err)
			}
		}
		if got := query(t, db, "SELECT COUNT(*) FROM kv"); got != "0" {
			t.Errorf("%s rows written, want 0", got)
		}
	})
}

// TestStoredPartitionNotConfigured refuses progress stored for a partition
// the configuration no longer reads: files listed as partitions of their
// own, then as one sequence.
func TestStoredPartitionNotConfigured(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		createKV(t, db)
		dir := t.TempDir()
		a := writeLines(t, dir, "a.jsonl", []string{kvLine("+I", 1, "a")})
		b := writeLines(t, dir, "b.jsonl", []string{kvLine("+I", 2, "b")})
		cfg := kvPipeline(db, "layout")
		cfg.Source.Set("paths", []string(nil))
		cfg.Source.Set("partitions", [][]string{{a}, {b}})
		if r := runPipeline(t, cfg); r.err != nil {
			t.Fatal(r.err)
		}
		cfg.Source.Set("paths", []string{a, b})
		cfg.Source.Set("partitions", [][]string(nil))
		_, err := engine.New(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), "for partition "+b+", which this configuration does not read") ||
			!strings.Contains(err.Error(), "txsink reset") {
			t.Fatalf("New = %v, want the refusal of b's progress", err)
		}
	})
}
