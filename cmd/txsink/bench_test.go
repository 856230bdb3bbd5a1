package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestBenchSQLite runs each bench workload, tiny, on SQLite and checks that
// every figure is reported and the final state verified. It checks no
// speed: figures on a shared machine mean nothing in a unit test.
func TestBenchSQLite(t *testing.T) {
	for _, w := range []string{"insert-only", "update-heavy", "txn"} {
		t.Run(w, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run([]string{"bench", "--workload", w, "--orders", "40", "--partitions", "2", "--dir", t.TempDir()}, &out, &errOut)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
			}
			for _, label := range []string{"input events/s", "rows written/s", "bulk load", "rows/s ÷ bulk", "events/s ÷ bulk",
				"peak RSS", "commits", "commit latency", "p50", "p99", "verified"} {
				if !strings.Contains(out.String(), label) {
					t.Errorf("output lacks %q:\n%s", label, out.String())
				}
			}
			if strings.Contains(out.String(), "NaN") || strings.Contains(out.String(), "Inf") {
				t.Errorf("a figure is not a number:\n%s", out.String())
			}
		})
	}
}
