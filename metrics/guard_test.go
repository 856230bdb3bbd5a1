package metrics_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
)

// TestGuardRefusedAfterReplay runs a version-guarded changelog into a
// table, lets a second writer move rows ahead, and replays the changelog
// from its start as a second pipeline, on every server, plain and
// transaction mode: txsink_guard_refused_total is 0 after the first run
// and, after the replay, exactly the upserts and deletes the stored rows'
// newer versions kept out, as the engine's status says.
func TestGuardRefusedAfterReplay(t *testing.T) {
	const keys, deletes, ahead = 20, 3, 5
	// One change per key, each its own source transaction in transaction
	// mode: however the changes are cut into commits, each is refused or
	// not on its own. Keys 1..keys are inserted at version 2; the
	// deletes, at version 3, find no row in the first run.
	var lines []string
	add := func(op string, id, v int) {
		lines = append(lines, fmt.Sprintf(`{"op":%q,"table":"s.vr","row":{"id":%d,"v":%d,"val":"v%d"},"txn":"t%d","txn_end":true}`,
			op, id, v, v, len(lines)+1))
	}
	for id := 1; id <= keys; id++ {
		add("+I", id, 2)
	}
	for id := keys + 1; id <= keys+deletes; id++ {
		add("-D", id, 3)
	}
	for _, mode := range []string{"plain", "transaction"} {
		for _, dialect := range testdb.Dialects {
			t.Run(mode+"/"+dialect, func(t *testing.T) {
				t.Parallel()
				db := testdb.Open(t, dialect)
				db.Exec(t, "CREATE TABLE vr (id INT NOT NULL PRIMARY KEY, v BIGINT NOT NULL, val VARCHAR(10) NOT NULL)")
				path := filepath.Join(t.TempDir(), "p0.jsonl")
				if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				run := func(name string) float64 {
					t.Helper()
					cfg := config.Default()
					cfg.Name = name
					cfg.Source = config.Source{Type: "file", Format: "txsink-json"}
					cfg.Source.Set("paths", []string{path})
					cfg.Target.URL = db.URL
					cfg.Tables = []config.Table{{Source: "s.vr", VersionColumn: "v"}}
					cfg.Sink.FlushMaxRows = 4 // several commits
					cfg.Sink.FlushInterval = 0
					if mode == "transaction" {
						cfg.Sink.TxnEnabled = true
						cfg.Sink.FlushInterval = 20 * time.Millisecond
					}
					e, reg := meteredEngine(t, &cfg)
					if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
						t.Fatalf("run %s: %v", name, err)
					}
					fams, err := reg.Gather()
					if err != nil {
						t.Fatal(err)
					}
					got := sum(t, fams, "txsink_guard_refused_total", map[string]string{"pipeline": name})
					if st := e.Status().Stats.GuardRefused; got != float64(st) {
						t.Errorf("%s: txsink_guard_refused_total = %v, the status says %d", name, got, st)
					}
					return got
				}
				if got := run("first"); got != 0 {
					t.Errorf("first run: txsink_guard_refused_total = %v, want 0: every change is newer", got)
				}
				// The second writer: keys 1..ahead and the deleted keys
				// at version 100.
				db.Exec(t, fmt.Sprintf("UPDATE vr SET v = 100, val = 'w2' WHERE id <= %d", ahead))
				for id := keys + 1; id <= keys+deletes; id++ {
					db.Exec(t, fmt.Sprintf("INSERT INTO vr VALUES (%d, 100, 'w2')", id))
				}
				if got := run("replay"); got != ahead+deletes {
					t.Errorf("replay: txsink_guard_refused_total = %v, want %d (%d upserts, %d deletes)", got, ahead+deletes, ahead, deletes)
				}
				var kept int
				if err := db.SQL.QueryRow("SELECT COUNT(*) FROM vr WHERE v = 100").Scan(&kept); err != nil {
					t.Fatal(err)
				}
				if kept != ahead+deletes {
					t.Errorf("rows the second writer moved ahead and kept: %d, want %d", kept, ahead+deletes)
				}
			})
		}
	}
}
