//go:build unix

package main

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// waitStderr waits until the child's stderr matches re and returns the
// match. It fails the test if the child exits first or the deadline
// passes.
func (p *proc) waitStderr(re *regexp.Regexp) []string {
	p.t.Helper()
	deadline := time.NewTimer(startDeadline)
	defer deadline.Stop()
	for {
		if m := re.FindStringSubmatch(p.Stderr()); m != nil {
			return m
		}
		select {
		case <-p.notify:
		case <-p.done:
			if m := re.FindStringSubmatch(p.Stderr()); m != nil {
				return m
			}
			p.t.Fatalf("txsink exited (%v) before logging %s\nstderr:\n%s", p.cmd.ProcessState, re, tail(p.Stderr()))
		case <-deadline.C:
			p.t.Fatalf("txsink did not log %s in %s\nstderr:\n%s", re, startDeadline, tail(p.Stderr()))
		}
	}
}

// forward accepts connections on l and joins each to a new connection to
// addr, until l is closed.
func forward(t *testing.T, l net.Listener, addr string) {
	t.Helper()
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", addr)
			if err != nil {
				in.Close()
				continue
			}
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
}

// TestRunWaitsForTheTarget starts txsink run on a target address where
// nothing listens yet: it logs that it waits for the target, /readyz
// answers 503 starting, and once the server answers there (a forwarder
// to the real one, started after the first wait was logged) the run
// applies its input and exits 0.
func TestRunWaitsForTheTarget(t *testing.T) {
	txsinkBinary(t)
	for _, dialect := range []string{"mysql", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			e := newRefusalEnv(t, dialect)
			u, err := url.Parse(e.url)
			if err != nil {
				t.Fatal(err)
			}
			real := u.Host
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			u.Host = l.Addr().String()
			l.Close() // nothing listens there until the forwarder does
			e.url = u.String()
			e.extra = "startup-timeout: 10m\n"

			p := start(t, "run", "--config", e.config(), "--http", "127.0.0.1:0")
			p.waitStderr(regexp.MustCompile(`msg="waiting for the target database to answer" err="connect [^"]*` + regexp.QuoteMeta(u.Host)))
			base := servingRE.FindStringSubmatch(p.Stderr())
			if base == nil {
				t.Fatalf("no 'serving metrics and status' log line:\n%s", tail(p.Stderr()))
			}
			resp, err := http.Get(base[1] + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "starting") {
				t.Errorf("/readyz while waiting = %d %q, want 503 starting", resp.StatusCode, body)
			}

			l, err = net.Listen("tcp", u.Host)
			if err != nil {
				t.Fatalf("listen again on %s: %v", u.Host, err)
			}
			t.Cleanup(func() { l.Close() })
			forward(t, l, real)
			if code := p.wait(); code != 0 {
				t.Fatalf("txsink run exited %d\nstderr:\n%s", code, tail(p.Stderr()))
			}
			if !strings.Contains(p.Stderr(), `msg="the target database answered"`) {
				t.Errorf("no log line says the target answered:\n%s", tail(p.Stderr()))
			}
			var n int
			if err := e.db.SQL.QueryRow("SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != 1 {
				t.Errorf("%d rows in t (%v), want the input's 1", n, err)
			}
		})
	}
}
