package starrocks

import (
	"context"
	"testing"

	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/sink/sinktest"
	"github.com/txsink/txsink/sink/starrocks/starrocksfake"
)

// withTables makes txsink's own tables on the fake, through its Exec (the
// target's Setup then finds them in the fake's catalog); a real cluster's
// Setup makes them itself.
func (c *cluster) withTables(t testing.TB) *cluster {
	t.Helper()
	if c.fake != nil {
		c.ddl(t, ProgressDDL, ClaimsDDL)
	}
	return c
}

// open opens the target on c through the registry, closed when t ends.
func (c *cluster) open(t testing.TB) *Target {
	t.Helper()
	s, err := sink.Open(context.Background(), c.url, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.(*Target)
}

// TestConformance runs the sink conformance suite against the fake (or
// the cluster TXSINK_TEST_STARROCKS_URL names), through the registry.
func TestConformance(t *testing.T) {
	sinktest.Run(t, func(t *testing.T) *sinktest.Server {
		c := realOrFake(t, starrocksfake.Options{}).withTables(t)
		return &sinktest.Server{Dialect: "starrocks", SQL: c.SQL, Exec: c.exec, Open: func(t *testing.T) sink.Sink { return c.open(t) }}
	})
}
