package testdb

import (
	"net"
	"net/url"
	"os"
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
