package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
)

// TestTargetAlteredWhileRunning alters a target table under a following
// pipeline, between two changes: a narrowing makes the next value that no
// longer fits a refusal (never a rounded row), a widening or a new column
// lets the next change in (never a refusal against the old definition).
// Plain and transaction mode.
func TestTargetAlteredWhileRunning(t *testing.T) {
	type step struct {
		alter map[string]string // by dialect; a dialect without one is not run
		line  string            // the change after the ALTER
		// want is the row the change leaves (SELECT id, note), or ""
		// when it is refused with an error containing refused.
		want, refused string
	}
	ts := map[string]string{"mysql": "DATETIME(6)", "postgres": "TIMESTAMP(6)", "sqlite": "DATETIME"}
	steps := map[string]step{
		"decimal narrowed": {
			alter:   map[string]string{"mysql": "ALTER TABLE altered MODIFY v DECIMAL(10,0) NOT NULL", "postgres": "ALTER TABLE altered ALTER COLUMN v TYPE DECIMAL(10,0)"},
			line:    `{"op":"+I","table":"shop.altered","row":{"id":2,"v":"1.25","at":"2026-12-02T10:00:00Z"}}`,
			refused: "fractional digits",
		},
		"fractional seconds cut": {
			alter:   map[string]string{"mysql": "ALTER TABLE altered MODIFY at DATETIME(0)", "postgres": "ALTER TABLE altered ALTER COLUMN at TYPE TIMESTAMP(0)"},
			line:    `{"op":"+I","table":"shop.altered","row":{"id":2,"v":"1.00","at":"2026-12-02T10:00:00.123456Z"}}`,
			refused: "fractional",
		},
		"string widened": {
			alter: map[string]string{"mysql": "ALTER TABLE altered MODIFY note VARCHAR(20)", "postgres": "ALTER TABLE altered ALTER COLUMN note TYPE VARCHAR(20)"},
			line:  `{"op":"+I","table":"shop.altered","row":{"id":2,"v":"1.00","note":"abcdefghij"}}`,
			want:  "2|abcdefghij",
		},
		// The server refuses the statement written for the old definition;
		// the table described again, txsink's own refusal names what is
		// wrong now, not the server's message about the old shape.
		"column dropped": {
			alter:   map[string]string{"mysql": "ALTER TABLE altered DROP COLUMN note", "postgres": "ALTER TABLE altered DROP COLUMN note", "sqlite": "ALTER TABLE altered DROP COLUMN note"},
			line:    `{"op":"+I","table":"shop.altered","row":{"id":2,"v":"1.00","note":"n"}}`,
			refused: "carries column note, which the target table does not have",
		},
		"string narrowed": {
			alter:   map[string]string{"mysql": "ALTER TABLE altered MODIFY note VARCHAR(3)", "postgres": "ALTER TABLE altered ALTER COLUMN note TYPE VARCHAR(3)"},
			line:    `{"op":"+I","table":"shop.altered","row":{"id":2,"v":"1.00","note":"abcd"}}`,
			refused: "the column holds at most 3",
		},
		"NOT NULL added": {
			alter:   map[string]string{"mysql": "ALTER TABLE altered MODIFY note VARCHAR(5) NOT NULL", "postgres": "ALTER TABLE altered ALTER COLUMN note SET NOT NULL"},
			line:    `{"op":"+I","table":"shop.altered","row":{"id":2,"v":"1.00","note":null}}`,
			refused: "cannot go into a NOT NULL column",
		},
		"timestamp made text": {
			alter: map[string]string{"mysql": "ALTER TABLE altered MODIFY at VARCHAR(40)", "postgres": "ALTER TABLE altered ALTER COLUMN at TYPE TEXT"},
			line:  `{"op":"+I","table":"shop.altered","row":{"id":2,"v":"1.00","note":"t","at":"2026-12-02T10:00:00Z"}}`,
			want:  "2|t",
		},
		"column added": {
			alter: map[string]string{"mysql": "ALTER TABLE altered ADD COLUMN extra INT", "postgres": "ALTER TABLE altered ADD COLUMN extra INT", "sqlite": "ALTER TABLE altered ADD COLUMN extra INT"},
			line:  `{"op":"+I","table":"shop.altered","row":{"id":2,"v":"1.00","note":"n","extra":7}}`,
			want:  "2|n",
		},
	}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		n := 0
		for name, st := range steps {
			alter, ok := st.alter[db.Dialect]
			if !ok {
				continue
			}
			for _, txn := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/txn=%v", name, txn), func(t *testing.T) {
					db.Exec(t, "DROP TABLE IF EXISTS altered",
						`CREATE TABLE altered (id INT NOT NULL PRIMARY KEY, v DECIMAL(10,2) NOT NULL, note VARCHAR(5), at `+ts[db.Dialect]+`)`)
					dir := t.TempDir()
					path := filepath.Join(dir, "changes.jsonl")
					if err := os.WriteFile(path, []byte(`{"op":"+I","table":"shop.altered","row":{"id":1,"v":"1.00","note":"one"}}`+"\n"), 0o644); err != nil {
						t.Fatal(err)
					}
					cfg := pipeline(db, config.Table{Source: "shop.altered"})
					n++
					cfg.Name = fmt.Sprintf("altered-%d", n)
					cfg.Source.Set("paths", []string{path})
					cfg.Source.Set("follow", true)
					cfg.Sink.FlushInterval = 10 * time.Millisecond
					if txn {
						txnPipeline(cfg)
					}
					commits := make(chan struct{}, 100)
					e := newEngine(t, cfg, engine.WithCommitHook(func(*commit.Unit) { commits <- struct{}{} }))
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					done := make(chan error, 1)
					go func() { done <- e.Run(ctx, engine.RunOptions{}) }()
					waitCommit := func() {
						t.Helper()
						select {
						case <-commits:
						case err := <-done:
							t.Fatalf("Run ended before the awaited commit: %v", err)
						case <-time.After(time.Minute):
							t.Fatal("no commit within a minute")
						}
					}
					waitCommit()
					db.Exec(t, alter)
					f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
					if err != nil {
						t.Fatal(err)
					}
					f.WriteString(st.line + "\n")
					f.Close()
					if st.want == "" {
						select {
						case err := <-done:
							if err == nil || !strings.Contains(err.Error(), st.refused) {
								t.Fatalf("Run = %v, want a refusal containing %q", err, st.refused)
							}
						case <-time.After(time.Minute):
							t.Fatal("the pipeline did not stop within a minute")
						}
						if got := query(t, db, "SELECT COUNT(*) FROM altered WHERE id = 2"); got != "0" {
							t.Errorf("the refused change wrote %s rows", got)
						}
						return
					}
					for {
						waitCommit()
						if query(t, db, "SELECT COUNT(*) FROM altered WHERE id = 2") == "1" {
							break
						}
					}
					cancel()
					if err := <-done; err != nil {
						t.Fatalf("Run = %v", err)
					}
					// The query's text is the subtest's own: PostgreSQL refuses a
					// statement prepared for the table before it was altered.
					if got := query(t, db, fmt.Sprintf("SELECT id, note FROM altered WHERE id = 2 /* %d */", n)); got != st.want {
						t.Errorf("row 2 = %s, want %s", got, st.want)
					}
				})
			}
		}
	})
}
