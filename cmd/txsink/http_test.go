//go:build unix

package main

// These tests run the real binary and talk to its status server.

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
)

// servingRE finds the status server's URL in the log.
var servingRE = regexp.MustCompile(`msg="serving metrics and status" url=(http://\S+)`)

// TestHTTPWhileRunning starts a following run with --http on a free port,
// reads every endpoint while it runs, and stops it with SIGTERM.
func TestHTTPWhileRunning(t *testing.T) {
	db := testdb.SQLite(t)
	db.Exec(t, workload.Schema("sqlite")...)
	f := newFeed(t, workload.Generate(workload.Spec{Orders: 200, Partitions: 1, Seed: 11, Events: true}))
	dir := t.TempDir()
	f.appendLines(t, dir, 0, 0, len(f.lines[0]))
	const name = "http-test"
	cfg := writeConfig(t, dir, "follow.yaml", pipelineSpec{name: name, url: db.URL, paths: []string{fileName(0)}, follow: true, interval: "50ms"})

	p := start(t, "run", "--config", cfg, "--log-level", "debug", "--http", "127.0.0.1:0")
	p.waitCommits(1) // the server starts before the first commit
	m := servingRE.FindStringSubmatch(p.Stderr())
	if m == nil {
		t.Fatalf("no 'serving metrics and status' log line:\n%s", tail(p.Stderr()))
	}
	base := m[1]
	client := &http.Client{Timeout: 10 * time.Second}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	tests := []struct {
		path     string
		code     int
		contains []string
	}{
		{"/healthz", 200, []string{"ok"}},
		{"/readyz", 200, []string{"running"}},
		{"/metrics", 200, []string{`txsink_state{pipeline="http-test",state="running"} 1`, `txsink_commits_total{pipeline="http-test",result="ok"}`, "go_goroutines", "process_resident_memory_bytes", `txsink_build_info{commit="`}},
		{"/status", 200, []string{`"pipeline": "http-test"`, `"state": "running"`, `"committed_offset"`}},
	}
	for _, tt := range tests {
		code, body := get(tt.path)
		if code != tt.code {
			t.Errorf("GET %s = %d, want %d\n%s", tt.path, code, tt.code, body)
		}
		for _, c := range tt.contains {
			if !strings.Contains(body, c) {
				t.Errorf("GET %s does not hold %q:\n%s", tt.path, c, body)
			}
		}
	}
	_, body := get("/status")
	var st struct {
		Stats struct{ Commits int64 } `json:"stats"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil || st.Stats.Commits < 1 {
		t.Errorf("/status: %v, %d commits; want JSON with at least the commit awaited:\n%s", err, st.Stats.Commits, body)
	}

	p.signal(syscall.SIGTERM)
	if code := p.wait(); code != 0 {
		t.Fatalf("txsink run after SIGTERM exited %d\nstderr:\n%s", code, tail(p.Stderr()))
	}
	// Off a terminal, stdout holds the one summary line and nothing else.
	parseSummary(t, name, p.Stdout())
	if _, err := client.Get(base + "/healthz"); err == nil {
		t.Errorf("the status server still answers after txsink exited")
	}
}

// TestHTTPAddressTaken checks that an address given with --http must be
// free, while the default one is best effort.
func TestHTTPAddressTaken(t *testing.T) {
	db := testdb.SQLite(t)
	db.Exec(t, workload.Schema("sqlite")...)
	f := newFeed(t, workload.Generate(workload.Spec{Orders: 20, Partitions: 1, Seed: 12}))
	dir := t.TempDir()
	f.appendLines(t, dir, 0, 0, len(f.lines[0]))
	cfg := writeConfig(t, dir, "pipeline.yaml", pipelineSpec{name: "taken", url: db.URL, paths: []string{fileName(0)}})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	code, stdout, stderr := runTxsink(t, "run", "--config", cfg, "--http", ln.Addr().String())
	if code != 1 || !strings.Contains(stderr, "--http "+ln.Addr().String()) || stdout != "" {
		t.Errorf("--http on a taken address: exit %d, want 1 with an error naming it\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	// Take the default address, unless something else holds it already:
	// either way it is taken while txsink runs.
	def, err := net.Listen("tcp", defaultHTTPAddr)
	if err == nil {
		t.Cleanup(func() { def.Close() })
	} else if !errors.Is(err, syscall.EADDRINUSE) {
		t.Skipf("cannot tell whether %s is taken: %v", defaultHTTPAddr, err)
	}
	code, stdout, stderr = runTxsink(t, "run", "--config", cfg)
	if code != 0 || !strings.Contains(stderr, "default address is taken") {
		t.Errorf("default address taken: exit %d, want 0 with a warning\nstderr:\n%s", code, stderr)
	}
	parseSummary(t, "taken", stdout)

	code, _, stderr = runTxsink(t, "run", "--config", cfg, "--http", "off")
	if code != 0 || strings.Contains(stderr, "serving metrics") || strings.Contains(stderr, "address is taken") {
		t.Errorf("--http off: exit %d, and the log mentions a server:\n%s", code, stderr)
	}
}
