//go:build unix

package main

import (
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
)

// waitLines waits until the child's stderr holds at least n lines that
// contain s, and returns them. It fails the test if the child exits first
// or the deadline passes.
func (p *proc) waitLines(s string, n int) []string {
	p.t.Helper()
	deadline := time.NewTimer(startDeadline)
	defer deadline.Stop()
	for {
		var got []string
		for _, l := range strings.Split(p.Stderr(), "\n") {
			if strings.Contains(l, s) {
				got = append(got, l)
			}
		}
		if len(got) >= n {
			return got
		}
		select {
		case <-p.notify:
		case <-p.done:
			p.t.Fatalf("txsink exited (%v) with %d lines holding %q, before the %d awaited\nstderr:\n%s", p.cmd.ProcessState, len(got), s, n, tail(p.Stderr()))
		case <-deadline.C:
			p.t.Fatalf("txsink logged %d lines holding %q in %s, want %d\nstderr:\n%s", len(got), s, startDeadline, n, tail(p.Stderr()))
		}
	}
}

// TestFollowSaysCaughtUp runs the real binary on growing files with its
// stderr piped: it logs progress lines, and once everything in the files
// is committed it says "caught up, waiting for new records" once; records
// appended make it busy again, and it says so once more when they are
// committed.
func TestFollowSaysCaughtUp(t *testing.T) {
	db := testdb.SQLite(t)
	db.Exec(t, workload.Schema("sqlite")...)
	f := newFeed(t, workload.Generate(workload.Spec{Orders: 100, Partitions: 1, Seed: 12, Events: true}))
	dir := t.TempDir()
	half := len(f.lines[0]) / 2
	f.appendLines(t, dir, 0, 0, half)
	const name = "caught-up"
	cfg := writeConfig(t, dir, "follow.yaml", pipelineSpec{name: name, url: db.URL, paths: []string{fileName(0)}, follow: true, interval: "20ms"})

	p := start(t, "run", "--config", cfg, "--http", "off", "--progress-interval", "50ms")
	const caughtUp = `msg="caught up, waiting for new records"`
	p.waitLines(caughtUp, 1)
	if got := count(t, db, "orders"); got == 0 {
		t.Fatalf("caught up with no orders committed")
	}
	f.appendLines(t, dir, 0, half, len(f.lines[0]))
	lines := p.waitLines(caughtUp, 2)
	if !strings.Contains(lines[1], "commits=") {
		t.Errorf("caught-up line without the commits: %s", lines[1])
	}
	// Between the two, the appended records were read: progress lines
	// say so, and every record is committed by the second.
	stderr := p.Stderr()
	between := stderr[strings.Index(stderr, caughtUp)+len(caughtUp):]
	between = between[:strings.Index(between, caughtUp)]
	if !strings.Contains(between, "msg=progress") {
		t.Errorf("no progress line between the two caught-up lines:\n%s", tail(stderr))
	}
	p.signal(syscall.SIGTERM)
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, tail(p.Stderr()))
	}
	// A signal is how a follow run ends: its summary says so, not "done".
	if want := name + ": stopped by a signal, a rerun resumes after the last commit; "; !strings.HasPrefix(p.Stdout(), want) {
		t.Errorf("summary after SIGTERM = %q, want it to start %q", p.Stdout(), want)
	}
	checkFinal(t, db, f, dir, name)
}

// TestOutageWhileFollowing runs the real binary against MariaDB through
// a proxy the test takes down while records wait to be committed: /readyz
// answers 503 and /status says degraded with the last error while the
// unit is retried; once the proxy is back, the log says the target
// recovered, /readyz answers 200, and the target holds every record.
func TestOutageWhileFollowing(t *testing.T) {
	db := testdb.MySQL(t)
	db.Exec(t, workload.Schema("mysql")...)
	proxy, url := db.Proxied(t)
	f := newFeed(t, workload.Generate(workload.Spec{Orders: 60, Partitions: 1, Seed: 13, Events: true}))
	dir := t.TempDir()
	half := len(f.lines[0]) / 2
	f.appendLines(t, dir, 0, 0, half)
	const name = "outage"
	cfg := writeConfig(t, dir, "follow.yaml", pipelineSpec{name: name, url: url, paths: []string{fileName(0)}, follow: true, interval: "20ms"})

	p := start(t, "run", "--config", cfg, "--log-level", "debug", "--http", "127.0.0.1:0")
	p.waitCommits(1)
	m := servingRE.FindStringSubmatch(p.Stderr())
	if m == nil {
		t.Fatalf("no 'serving metrics and status' log line:\n%s", tail(p.Stderr()))
	}
	client := &http.Client{Timeout: 10 * time.Second}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := client.Get(m[1] + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	proxy.Down()
	f.appendLines(t, dir, 0, half, len(f.lines[0]))
	// sink.max-retries (10) keeps the unit retried for 20 s at the least.
	p.waitLines("transient target error; retrying the unit", 1)
	if code, body := get("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "pipeline is degraded: committing to the target failed") ||
		!strings.Contains(body, "last error: ") {
		t.Errorf("/readyz during the outage = %d %q, want 503 degraded with the last error", code, body)
	}
	if _, body := get("/status"); !strings.Contains(body, `"state": "degraded"`) || !strings.Contains(body, `"last_error": "`) ||
		!strings.Contains(body, `"attempts": `) {
		t.Errorf("/status during the outage:\n%s", body)
	}

	proxy.Up()
	rec := p.waitLines("target recovered", 1)
	if !strings.Contains(rec[0], "after=") || !strings.Contains(rec[0], "attempts=") || !strings.Contains(rec[0], "last_err=") {
		t.Errorf("the recovered line does not say after how long, how many attempts and what error: %s", rec[0])
	}
	if code, body := get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after the outage = %d %q, want 200", code, body)
	}
	p.signal(syscall.SIGTERM)
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, tail(p.Stderr()))
	}
	checkFinal(t, db, f, dir, name)
}
