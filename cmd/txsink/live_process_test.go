//go:build unix

package main

import (
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
	checkFinal(t, db, f, dir, name)
}
