package sqlsink_test

import (
	"context"
	"testing"

	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/sink/sinktest"
)

// TestConformance runs the sink conformance suite on each dialect's real
// server (under CI=true a missing server fails, never skips).
func TestConformance(t *testing.T) {
	for _, d := range testdb.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			sinktest.Run(t, func(t *testing.T) *sinktest.Server {
				db := testdb.Open(t, d)
				return &sinktest.Server{Dialect: db.Dialect, SQL: db.SQL, Open: func(t *testing.T) sink.Sink {
					t.Helper()
					s, err := sink.Open(context.Background(), db.URL, "")
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { s.Close() })
					return s
				}}
			})
		})
	}
}
