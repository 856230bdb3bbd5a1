package testdb

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// NATS returns the URL of the NATS server with JetStream that tests
// publish to (TXSINK_TEST_NATS_URL, by default nats://127.0.0.1:4222, as
// scripts/test-services.sh starts it), once it answers; the test skips
// when it does not, or fails under CI=true. Tests share the server, so
// each creates streams of its own, with subjects of its own.
func NATS(t testing.TB) string {
	t.Helper()
	raw := os.Getenv("TXSINK_TEST_NATS_URL")
	if raw == "" {
		raw = "nats://127.0.0.1:4222"
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("TXSINK_TEST_NATS_URL: %v", err)
	}
	c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		unavailable(t, "NATS at "+u.Host, "TXSINK_TEST_NATS_URL", err)
	}
	c.Close()
	return raw
}

// NATSServer is a NATS server with JetStream of a test's own (see
// PrivateNATS).
type NATSServer struct {
	// URL is where it listens, on a port of its own.
	URL  string
	t    testing.TB
	args []string
	cmd  *exec.Cmd
	done chan error
	log  string
}

// PrivateNATS starts a NATS server with JetStream of the test's own, in a
// temporary folder (its streams' files) on a free port, for a test that
// stops it (Kill) and starts it again (Start), which the shared server's
// other users must not see. It is killed by its process id when the test
// ends. It needs nats-server; without it the test fails under CI=true and
// is skipped otherwise.
func PrivateNATS(t testing.TB) *NATSServer {
	t.Helper()
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		if bin, err = exec.LookPath("/usr/sbin/nats-server"); err != nil {
			unavailable(t, "nats-server", "PATH", err)
		}
	}
	dir := t.TempDir()
	port := FreePort(t)
	s := &NATSServer{URL: fmt.Sprintf("nats://127.0.0.1:%d", port), t: t, log: filepath.Join(dir, "nats.log"),
		args: []string{bin, "-a", "127.0.0.1", "-p", fmt.Sprint(port), "-js", "-sd", filepath.Join(dir, "store"), "-l", filepath.Join(dir, "nats.log")}}
	s.Start()
	t.Cleanup(s.Kill)
	return s
}

// Start starts the server (again, on the same port and files) and waits
// until it accepts connections.
func (s *NATSServer) Start() {
	s.t.Helper()
	s.cmd = exec.Command(s.args[0], s.args[1:]...)
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("start nats-server: %v", err)
	}
	s.done = make(chan error, 1)
	go func(cmd *exec.Cmd, done chan<- error) { done <- cmd.Wait() }(s.cmd, s.done)
	host := strings.TrimPrefix(s.URL, "nats://")
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		c, err := net.DialTimeout("tcp", host, time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case werr := <-s.done:
			log, _ := os.ReadFile(s.log)
			s.t.Fatalf("nats-server exited (%v) before it answered: %v\n%s", werr, err, log)
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("nats-server did not answer within a minute: %v", err)
		}
	}
}

// Kill kills the server (SIGKILL, as a crash) and waits for it to exit;
// a server not running is left alone.
func (s *NATSServer) Kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}
