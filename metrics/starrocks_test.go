package metrics_test

import (
	"context"
	"strings"
	"testing"

	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/workload"
	"github.com/txsink/txsink/sink/starrocks"
	"github.com/txsink/txsink/sink/starrocks/starrocksfake"
	"github.com/txsink/txsink/sink/starrocks/starrockstest"
)

// TestStarRocksMetrics runs the workload into the StarRocks fake, two
// commit answers lost on the way, and checks the StarRocks metrics
// against what the fake received: one loads-per-commit observation per
// committed transaction, whose sum is the loads the fake accepted; one
// load-bytes observation per load, whose sum is their bodies' bytes; the
// label states read for the lost answers (the fake publishes at once, so
// visible); and the server's version.
func TestStarRocksMetrics(t *testing.T) {
	c := starrockstest.New(t, starrocksfake.Options{Version: "4.0.2 metrics"}, append([]string{starrocks.ProgressDDL, starrocks.ClaimsDDL}, workload.Schema("starrocks")...)...)
	f := c.NeedFake(t, "injects lost commit answers and counts the requests the fake received")
	res := workload.Generate(workload.Spec{Orders: 300, Partitions: 2, Seed: 5, Events: true})
	cfg := pipeline(c.TestDB(), writeFiles(t, res))
	e, reg := meteredEngine(t, cfg)
	f.Inject(starrocksfake.OpCommit, starrocksfake.DropAnswer, starrocksfake.PublishTimeout)
	if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}

	var loads, commits, bodyBytes int
	for _, r := range f.Requests() {
		switch {
		case r.Role == "BE" && strings.HasPrefix(r.Path, "/api/transaction/load"):
			loads++
			bodyBytes += int(r.Bytes)
		case r.Role == "FE" && strings.HasPrefix(r.Path, "/api/transaction/commit"):
			commits++
		}
	}
	lpc := family(t, fams, "txsink_starrocks_loads_per_commit").GetMetric()[0].GetHistogram()
	if got := int(lpc.GetSampleCount()); got != commits || commits < 3 {
		t.Errorf("loads_per_commit counted %d commits; the fake received %d commit requests (want several, all committed)", got, commits)
	}
	if got := int(lpc.GetSampleSum()); got != loads {
		t.Errorf("loads_per_commit sums to %d loads; the fake received %d", got, loads)
	}
	lb := family(t, fams, "txsink_starrocks_load_bytes").GetMetric()[0].GetHistogram()
	if got := int(lb.GetSampleCount()); got != loads {
		t.Errorf("load_bytes counted %d loads, want %d", got, loads)
	}
	if got := int(lb.GetSampleSum()); got != bodyBytes {
		t.Errorf("load_bytes sums to %d bytes; the fake received %d", got, bodyBytes)
	}
	if got := sum(t, fams, "txsink_starrocks_label_states_total", map[string]string{"state": "visible"}); got < 2 {
		t.Errorf("label_states{state=visible} = %v, want at least the 2 lost commit answers resolved", got)
	}
	if got := sum(t, fams, "txsink_starrocks_label_states_total", nil); got != sum(t, fams, "txsink_starrocks_label_states_total", map[string]string{"state": "visible"})+sum(t, fams, "txsink_starrocks_label_states_total", map[string]string{"state": "unknown"}) {
		t.Errorf("label states other than visible and unknown were read: %v in all", got)
	}
	if got := sum(t, fams, "txsink_starrocks_server_info", map[string]string{"version": "4.0.2 metrics"}); got != 1 {
		t.Errorf("server_info{version=\"4.0.2 metrics\"} = %v, want 1", got)
	}
}
