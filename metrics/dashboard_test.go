package metrics_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/metrics"
	"github.com/txsink/txsink/observe"
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
	used, data := dashboardMetrics(t)
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

// notOnDashboard lists the metrics deliberately left off
// deploy/grafana-dashboard.json, each with why.
var notOnDashboard = map[string]string{
	"txsink_build_info": "a label carrier of value 1: join on it for the version, nothing to plot",
	"txsink_records_skipped_total": "schema changes and logical decoding messages are rare and harmless: the log names " +
		"the first of each table, and a rate of them says nothing about the pipeline's health",
	"txsink_reduction_ratio": "the dashboard shows the ratio over 5 minutes, from txsink_events_total and " +
		"txsink_rows_written_total: the lifetime ratio hides a change in the workload",
}

// TestEveryMetricDocumented checks that every metric the package registers
// (gathered, not just named) is in docs/operations.md's metrics table and
// on the dashboard, or in notOnDashboard; and that the table names no
// metric the package does not export.
func TestEveryMetricDocumented(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	lag := int64(10)
	st := engine.Status{State: engine.StateRunning, Partitions: []engine.PartitionStatus{
		{Name: "a.jsonl", Unit: "bytes", End: 10},
		{Name: "orders/0", Unit: "records", End: 10},
		{Name: "postgres:txsink_docs", Unit: "bytes", End: 10, SlotLagBytes: &lag},
	},
		// A StarRocks target's figures are gathered only when it reports them.
		StarRocks: &observe.StarRocksStatus{ServerVersion: "4.0.1 test", LabelStates: map[string]int64{}}}
	m := metrics.New(&config.Config{Name: "docs"})
	if err := m.Register(reg, fixedStatus{st}); err != nil {
		t.Fatal(err)
	}
	// A vector is gathered once it has a series.
	m.OnChange(&changelog.Change{Table: changelog.Table{Namespace: "shop", Name: "orders"}, Kind: changelog.Insert})
	reg.MustRegister(metrics.BuildInfo("v0", "c0"))
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var registered []string
	for _, f := range fams {
		registered = append(registered, f.GetName())
	}
	if want := append(metrics.Names(), metrics.BuildInfoName); !sameSet(registered, want) {
		t.Errorf("registered %v, but Names() and BuildInfoName say %v", registered, want)
	}

	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	table := map[string]bool{}
	for _, m := range docRowRE.FindAllStringSubmatch(string(doc), -1) {
		table[m[1]] = true
	}
	dashboard, _ := dashboardMetrics(t)
	for _, name := range registered {
		if !table[name] {
			t.Errorf("%s is not in the metrics table of docs/operations.md", name)
		}
		why, off := notOnDashboard[name]
		switch {
		case !dashboard[name] && !off:
			t.Errorf("%s is not on deploy/grafana-dashboard.json: show it, or say in notOnDashboard why not", name)
		case dashboard[name] && off:
			t.Errorf("%s is on the dashboard but notOnDashboard says %q", name, why)
		}
	}
	for name := range table {
		if !slices.Contains(registered, name) {
			t.Errorf("docs/operations.md's metrics table lists %s, which package metrics does not export", name)
		}
	}
}

// docRowRE finds a metric's row in a Markdown table: "| `txsink_x{label}` |".
var docRowRE = regexp.MustCompile("(?m)^\\| `(txsink_[a-z0-9_]+)[{`]")

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// dashboardMetrics reads deploy/grafana-dashboard.json and returns the
// metrics its queries use, failing the test on a query that uses no txsink
// metric or one that package metrics does not export; and the file.
func dashboardMetrics(t *testing.T) (map[string]bool, []byte) {
	t.Helper()
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
	known := append(metrics.Names(), metrics.BuildInfoName)
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
	return used, data
}
