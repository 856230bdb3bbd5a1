package engine_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
)

// restartServer stops and starts the test server of dialect as root on
// this machine, the way scripts/test-services.sh starts it.
func restartServer(t *testing.T, dialect string) {
	t.Helper()
	run := func(name string, args ...string) {
		t.Helper()
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	switch dialect {
	case "mysql":
		run("mariadb-admin", "shutdown")
		run("start-stop-daemon", "--start", "--oknodo", "--background", "--exec", "/usr/sbin/mariadbd")
		deadline := time.Now().Add(60 * time.Second)
		for exec.Command("mariadb-admin", "ping", "--silent").Run() != nil {
			if time.Now().After(deadline) {
				t.Fatal("MariaDB did not come back within a minute")
			}
			time.Sleep(100 * time.Millisecond) // polling a server that is starting
		}
	case "postgres":
		versions, _ := filepath.Glob("/etc/postgresql/*")
		if len(versions) == 0 {
			t.Fatal("no PostgreSQL cluster under /etc/postgresql")
		}
		run("pg_ctlcluster", "--skip-systemctl-redirect", filepath.Base(versions[0]), "main", "restart")
	}
}

// TestServerRestart restarts the database server while a pipeline runs:
// txsink retries with backoff until the server is back, applies the
// interrupted unit again from its progress, and ends exact.
//
// It stops a server every other test uses, so it runs only when asked:
//
//	TXSINK_TEST_RESTART=1 go test -run TestServerRestart ./engine
//
// .ci/run does so after the rest of the suite, alone.
func TestServerRestart(t *testing.T) {
	if os.Getenv("TXSINK_TEST_RESTART") != "1" {
		t.Skip("restarts the shared database servers; run alone with TXSINK_TEST_RESTART=1 (as .ci/run does)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("TXSINK_TEST_RESTART=1 needs root, to stop and start the servers")
	}
	res := workload.Generate(workload.Spec{Orders: 3000, Partitions: 2, Seed: 41, Events: true})
	for _, d := range []string{"mysql", "postgres"} {
		t.Run(d, func(t *testing.T) {
			db := testdb.Open(t, d)
			db.Exec(t, workload.Schema(d)...)
			cfg := workloadPipeline(db, writeWorkload(t, res))
			cfg.Sink.FlushMaxRows = 300
			cfg.Sink.MaxRetries = 40
			var once sync.Once
			restarted := make(chan struct{})
			commits := 0
			e := newEngine(t, cfg, engine.WithCommitHook(func(*commit.Unit) {
				commits++
				if commits == 3 {
					once.Do(func() {
						go func() {
							defer close(restarted)
							restartServer(t, d)
						}()
					})
				}
			}))
			if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
				t.Fatalf("run across a server restart: %v", err)
			}
			<-restarted
			st := e.Stats()
			t.Logf("%s: %d commits, %d retries across the restart", d, st.Commits, st.Retries)
			// The admin connection of the test database was cut too;
			// database/sql reconnects it.
			checkFinal(t, db, res)
		})
	}
}
