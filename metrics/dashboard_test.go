package metrics_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/txsink/txsink/metrics"
)

// metricRE finds the txsink metric names a PromQL expression uses.
var metricRE = regexp.MustCompile(`\btxsink_[a-z0-9_]+`)

// exprs collects every "expr" string in a decoded JSON document.
func exprs(v any, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "expr" {
				*out = append(*out, s)
				continue
			}
			exprs(x, out)
		}
	case []any:
		for _, x := range v {
			exprs(x, out)
		}
	}
}

// TestGrafanaDashboard checks that deploy/grafana-dashboard.json is JSON,
// that every metric its queries use is one the package exports (a renamed
// metric would leave an empty panel), and that it shows what an on-call
// engineer needs.
func TestGrafanaDashboard(t *testing.T) {
	data, err := os.ReadFile("../deploy/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash map[string]any
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	var all []string
	exprs(dash, &all)
	if len(all) == 0 {
		t.Fatal("the dashboard has no queries")
	}
	known := metrics.Names()
	used := map[string]bool{}
	for _, e := range all {
		names := metricRE.FindAllString(e, -1)
		if len(names) == 0 {
			t.Errorf("query %q uses no txsink metric", e)
		}
		for _, n := range names {
			base := n
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if b, ok := strings.CutSuffix(n, suffix); ok && slices.Contains(known, b) {
					base = b
				}
			}
			if !slices.Contains(known, base) {
				t.Errorf("query %q uses %s, which package metrics does not export", e, n)
			}
			used[base] = true
		}
	}
	for _, want := range []string{
		"txsink_events_total", "txsink_rows_written_total", "txsink_commit_duration_seconds",
		"txsink_lag_bytes", "txsink_lag_records", "txsink_buffered_bytes", "txsink_open_source_txns",
		"txsink_errors_total", "txsink_retries_total", "txsink_state",
	} {
		if !used[want] {
			t.Errorf("the dashboard does not show %s", want)
		}
	}
	if !strings.Contains(string(data), "histogram_quantile(0.99,") || !strings.Contains(string(data), "histogram_quantile(0.5,") {
		t.Error("the dashboard lacks the p50 and p99 commit latency")
	}
}
