package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/format/native"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
	"github.com/txsink/txsink/metrics"
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/sink"
)

// writeFiles writes each partition of res as a txsink-json file and
// returns the paths.
func writeFiles(t *testing.T, res *workload.Result) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for p, changes := range res.Partitions {
		var data, line []byte
		for i := range changes {
			var err error
			if line, err = native.Append(line[:0], &changes[i]); err != nil {
				t.Fatal(err)
			}
			data = append(data, line...)
		}
		path := filepath.Join(dir, fmt.Sprintf("p%d.jsonl", p))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths
}

// pipeline returns the workload's pipeline config on db.
func pipeline(db *testdb.DB, paths []string) *config.Config {
	cfg := config.Default()
	cfg.Name = "metrics-test"
	cfg.Source = config.Source{Type: "file", Format: "txsink-json"}
	cfg.Source.Set("paths", paths)
	cfg.Target.URL = db.URL
	cfg.Tables = []config.Table{
		{Source: "shop.orders"},
		{Source: "shop.order_items", PrimaryKey: []string{"order_id", "line_no"}},
		{Source: "shop.order_events", AppendOnly: true},
	}
	cfg.Sink.FlushMaxRows = 200 // several commits, so the counters add up
	cfg.Sink.FlushInterval = 0
	return &cfg
}

// family returns the gathered family name, failing the test without it.
func family(t *testing.T, fams []*dto.MetricFamily, name string) *dto.MetricFamily {
	t.Helper()
	for _, f := range fams {
		if f.GetName() == name {
			return f
		}
	}
	t.Fatalf("metric %s was not gathered", name)
	return nil
}

// sum adds the values of the family's metrics whose labels include want.
func sum(t *testing.T, fams []*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	var total float64
	for _, m := range family(t, fams, name).GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && labels[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			total += m.Counter.GetValue()
		case m.Gauge != nil:
			total += m.Gauge.GetValue()
		case m.Histogram != nil:
			total += float64(m.Histogram.GetSampleCount())
		}
	}
	return total
}

// meteredEngine opens cfg's engine with its metrics registered on a
// pedantic registry of their own.
func meteredEngine(t *testing.T, cfg *config.Config) (*engine.Engine, *prometheus.Registry) {
	t.Helper()
	m := metrics.New(cfg)
	e, err := engine.New(context.Background(), cfg, engine.WithHooks(m))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	reg := prometheus.NewPedanticRegistry()
	if err := m.Register(reg, e); err != nil {
		t.Fatal(err)
	}
	return e, reg
}

// TestRunMatchesStatus runs the workload through a real engine on SQLite
// and checks every metric against the engine's own Status at the end.
func TestRunMatchesStatus(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 400, Partitions: 2, Seed: 7, Events: true})
	for _, mode := range []string{"plain", "transaction"} {
		t.Run(mode, func(t *testing.T) {
			db := testdb.SQLite(t)
			db.Exec(t, workload.Schema("sqlite")...)
			paths := writeFiles(t, res)
			cfg := pipeline(db, paths)
			if mode == "transaction" {
				cfg.Sink.TxnEnabled = true
				cfg.Sink.FlushInterval = 20 * time.Millisecond
				// A small buffer cuts several commits whatever the
				// machine's speed; the interval alone may not.
				cfg.Sink.TxnBufferSize = 16 << 10
			}
			e, reg := meteredEngine(t, cfg)
			if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
				t.Fatal(err)
			}
			st := e.Status()
			fams, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}

			var gathered []string
			for _, f := range fams {
				gathered = append(gathered, f.GetName())
			}
			slices.Sort(gathered)
			// A file pipeline has no Kafka partitions, so no gauge in
			// records, no replication slot, and (SQLite) none of
			// StarRocks'.
			want := slices.DeleteFunc(metrics.Names(), func(n string) bool {
				return strings.HasSuffix(n, "_records") || n == "txsink_slot_lag_bytes" || strings.HasPrefix(n, "txsink_starrocks_")
			})
			slices.Sort(want)
			if !slices.Equal(gathered, want) {
				t.Errorf("gathered families %v, want metrics.Names() %v", gathered, want)
			}

			checks := []struct {
				name   string
				labels map[string]string
				want   float64
			}{
				{"txsink_rows_written_total", map[string]string{"op": "upsert"}, float64(st.Stats.Upserted)},
				{"txsink_rows_written_total", map[string]string{"op": "delete"}, float64(st.Stats.Deleted)},
				{"txsink_rows_written_total", map[string]string{"op": "insert"}, float64(st.Stats.Inserted)},
				{"txsink_commits_total", map[string]string{"result": "ok"}, float64(st.Stats.Commits)},
				{"txsink_commits_total", map[string]string{"result": "error"}, 0},
				{"txsink_commit_duration_seconds", nil, float64(st.Stats.Commits)},
				{"txsink_source_txns_committed_total", nil, float64(st.Stats.Txns)},
				{"txsink_retries_total", nil, float64(st.Stats.Retries)},
				{"txsink_errors_total", nil, 0},
				{"txsink_bytes_read_total", nil, float64(st.Stats.Bytes)},
				// Everything is committed: nothing stays buffered.
				{"txsink_buffered_bytes", nil, 0},
				{"txsink_open_source_txns", nil, 0},
				{"txsink_state", map[string]string{"state": "stopped"}, 1},
				{"txsink_state", nil, 1}, // one-hot: the others are 0
				{"txsink_lag_bytes", nil, 0},
				{"txsink_reduction_ratio", nil, metrics.ReductionRatio(st.Stats)},
				{"txsink_events_total", map[string]string{"pipeline": "metrics-test"}, float64(res.Changes())},
			}
			for kind, n := range st.Stats.Events {
				checks = append(checks, struct {
					name   string
					labels map[string]string
					want   float64
				}{"txsink_events_total", map[string]string{"kind": kind}, float64(n)})
			}
			for _, p := range st.Partitions {
				checks = append(checks, struct {
					name   string
					labels map[string]string
					want   float64
				}{"txsink_committed_offset_bytes", map[string]string{"partition": p.Name}, float64(p.Committed)},
					struct {
						name   string
						labels map[string]string
						want   float64
					}{"txsink_read_offset_bytes", map[string]string{"partition": p.Name}, float64(p.Read)})
			}
			// Each file is read from its start: the bytes read are the
			// files' sizes and the read positions' sum, line terminators
			// included.
			var size int64
			for _, p := range paths {
				fi, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				size += fi.Size()
			}
			checks = append(checks, struct {
				name   string
				labels map[string]string
				want   float64
			}{"txsink_bytes_read_total", nil, float64(size)},
				struct {
					name   string
					labels map[string]string
					want   float64
				}{"txsink_read_offset_bytes", nil, float64(size)})
			for _, c := range checks {
				if got := sum(t, fams, c.name, c.labels); got != c.want {
					t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
				}
			}
			if st.Stats.Commits < 2 || st.Stats.Upserted == 0 || st.Stats.Inserted == 0 {
				t.Errorf("the workload should commit several units with upserts and inserts: %+v", st.Stats)
			}
			if mode == "transaction" && st.Stats.Txns != int64(res.Txns) {
				t.Errorf("status txns %d, want %d", st.Stats.Txns, res.Txns)
			}
			if r := metrics.ReductionRatio(st.Stats); r <= 1 {
				t.Errorf("reduction ratio %v: the workload updates keys, so it must exceed 1", r)
			}

			// Label values come from the config, not from the data.
			for _, m := range family(t, fams, "txsink_events_total").GetMetric() {
				for _, l := range m.GetLabel() {
					switch l.GetName() {
					case "table":
						if !slices.ContainsFunc(cfg.Tables, func(tb config.Table) bool { return tb.Source == l.GetValue() }) {
							t.Errorf("table label %q is not a tables entry", l.GetValue())
						}
					case "partition":
						if !slices.ContainsFunc(st.Partitions, func(p engine.PartitionStatus) bool { return p.Name == l.GetValue() }) {
							t.Errorf("partition label %q is not a partition", l.GetValue())
						}
					}
				}
			}

			if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
				t.Errorf("promlint: %v %v", problems, err)
			}
		})
	}
}

// TestBadInputStop runs a pipeline into a change of a table no entry
// names: the pipeline fails, and the metrics say so.
func TestBadInputStop(t *testing.T) {
	db := testdb.SQLite(t)
	db.Exec(t, workload.Schema("sqlite")...)
	path := filepath.Join(t.TempDir(), "p0.jsonl")
	data := `{"op":"+I","table":"shop.order_events","row":{"order_id":1,"event":"NEW"}}` + "\n" +
		`{"op":"+I","table":"shop.nowhere","row":{"id":1}}` + "\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := pipeline(db, []string{path})
	e, reg := meteredEngine(t, cfg)
	runErr := e.Run(context.Background(), engine.RunOptions{})
	var re *reduce.Error
	if !errors.As(runErr, &re) {
		t.Fatalf("Run = %v, want a *reduce.Error", runErr)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"txsink_state", map[string]string{"state": "failed"}, 1},
		{"txsink_state", nil, 1},
		{"txsink_errors_total", map[string]string{"class": "permanent"}, 1},
		{"txsink_errors_total", map[string]string{"class": "transient"}, 0},
		{"txsink_events_total", map[string]string{"table": "_unmatched"}, 1},
		{"txsink_events_total", map[string]string{"table": "shop.order_events"}, 1},
		{"txsink_commits_total", map[string]string{"result": "ok"}, 0},
		{"txsink_rows_written_total", nil, 0},
	} {
		if got := sum(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

// TestHooks drives the hooks directly with what a run cannot easily
// produce on SQLite: retries, failed commits, transient stops.
func TestHooks(t *testing.T) {
	transient := &sink.Error{Op: "commit", Transient: true, Err: errors.New("deadlock")}
	permanent := &sink.Error{Op: "upsert", Err: errors.New("data too long")}
	tests := []struct {
		name  string
		drive func(m *metrics.Metrics)
		want  map[string]float64 // "name{label=value}" -> value
	}{
		{
			name: "retried then committed",
			drive: func(m *metrics.Metrics) {
				m.OnRetry(1, time.Millisecond, transient)
				m.OnRetry(2, time.Millisecond, transient)
				m.OnCommit(engine.CommitInfo{Changes: 9, Upserted: 3, Deleted: 1, Inserted: 2, Txns: 2, Took: 30 * time.Millisecond})
				m.OnStop(nil)
			},
			want: map[string]float64{
				"txsink_retries_total":                   2,
				"txsink_errors_total{class=transient}":   2,
				"txsink_errors_total{class=permanent}":   0,
				"txsink_commits_total{result=ok}":        1,
				"txsink_rows_written_total{op=upsert}":   3,
				"txsink_rows_written_total{op=delete}":   1,
				"txsink_rows_written_total{op=insert}":   2,
				"txsink_source_txns_committed_total":     2,
				"txsink_commit_duration_seconds":         1,
				"txsink_commit_duration_seconds_sum_gt0": 1,
			},
		},
		{
			name: "retries ran out",
			drive: func(m *metrics.Metrics) {
				m.OnRetry(1, time.Millisecond, transient)
				m.OnCommit(engine.CommitInfo{Upserted: 5, Took: time.Second, Err: transient})
				m.OnStop(fmt.Errorf("flush: %w", transient))
			},
			want: map[string]float64{
				"txsink_retries_total":                 1,
				"txsink_errors_total{class=transient}": 2,
				"txsink_errors_total{class=permanent}": 0,
				"txsink_commits_total{result=ok}":      0,
				"txsink_commits_total{result=error}":   1,
				"txsink_rows_written_total{op=upsert}": 0, // rolled back
				"txsink_commit_duration_seconds":       1,
			},
		},
		{
			name: "refused statement",
			drive: func(m *metrics.Metrics) {
				m.OnCommit(engine.CommitInfo{Upserted: 5, Took: time.Millisecond, Err: permanent})
				m.OnStop(permanent)
			},
			want: map[string]float64{
				"txsink_retries_total":                 0,
				"txsink_errors_total{class=transient}": 0,
				"txsink_errors_total{class=permanent}": 1,
				"txsink_commits_total{result=error}":   1,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &config.Config{Name: "hooks"}
			m := metrics.New(cfg)
			reg := prometheus.NewPedanticRegistry()
			if err := m.Register(reg, fixedStatus{engine.Status{Pipeline: "hooks", State: engine.StateRunning}}); err != nil {
				t.Fatal(err)
			}
			tt.drive(m)
			fams, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			for key, want := range tt.want {
				name, labels := parseKey(key)
				if strings.HasSuffix(name, "_sum_gt0") {
					h := family(t, fams, strings.TrimSuffix(name, "_sum_gt0")).GetMetric()[0].GetHistogram()
					if got := h.GetSampleSum() > 0; got != (want == 1) {
						t.Errorf("%s: histogram sum %v", key, h.GetSampleSum())
					}
					continue
				}
				if got := sum(t, fams, name, labels); got != want {
					t.Errorf("%s = %v, want %v", key, got, want)
				}
			}
		})
	}
}

// parseKey splits "name{k=v}" into the name and its labels.
func parseKey(key string) (string, map[string]string) {
	name, rest, ok := strings.Cut(key, "{")
	if !ok {
		return name, nil
	}
	k, v, _ := strings.Cut(strings.TrimSuffix(rest, "}"), "=")
	return name, map[string]string{k: v}
}

type fixedStatus struct{ st engine.Status }

func (f fixedStatus) Status() engine.Status { return f.st }

// TestStatusGauges checks the gauges read from a Status snapshot,
// including a partition of unknown size (no lag) and one whose file shrank.
func TestStatusGauges(t *testing.T) {
	last := time.Now().Add(-90 * time.Second)
	st := engine.Status{
		Pipeline: "gauges", State: engine.StateStopping, BufferedBytes: 4096, OpenTxns: 3, LastCommit: last,
		Partitions: []engine.PartitionStatus{
			{Name: "a.jsonl", Committed: 100, Read: 150, End: 1000},
			{Name: "-", Committed: 10, Read: 20, End: -1},
			{Name: "rotated.jsonl", Committed: 500, Read: 500, End: 40},
		},
		Stats: engine.StatsSnapshot{Events: map[string]int64{"+I": 30, "+U": 10}, Upserted: 8, Deleted: 2, Bytes: 777, Skipped: 4},
	}
	m := metrics.New(&config.Config{Name: "gauges"})
	reg := prometheus.NewPedanticRegistry()
	if err := m.Register(reg, fixedStatus{st}); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"txsink_buffered_bytes", nil, 4096},
		{"txsink_open_source_txns", nil, 3},
		{"txsink_committed_offset_bytes", map[string]string{"partition": "a.jsonl"}, 100},
		{"txsink_read_offset_bytes", map[string]string{"partition": "a.jsonl"}, 150},
		{"txsink_lag_bytes", map[string]string{"partition": "a.jsonl"}, 900},
		{"txsink_lag_bytes", map[string]string{"partition": "rotated.jsonl"}, 0},
		{"txsink_read_offset_bytes", map[string]string{"partition": "-"}, 20},
		{"txsink_reduction_ratio", nil, 4},
		{"txsink_bytes_read_total", nil, 777},
		{"txsink_skipped_total", nil, 4},
		{"txsink_last_commit_timestamp_seconds", nil, float64(last.UnixNano()) / 1e9},
		{"txsink_state", map[string]string{"state": "stopping"}, 1},
		{"txsink_state", map[string]string{"state": "running"}, 0},
	}
	for _, tt := range tests {
		if got := sum(t, fams, tt.name, tt.labels); math.Abs(got-tt.want) > 1e-6 {
			t.Errorf("%s%v = %v, want %v", tt.name, tt.labels, got, tt.want)
		}
	}
	if n := len(family(t, fams, "txsink_lag_bytes").GetMetric()); n != 2 {
		t.Errorf("%d lag series, want 2: a partition of unknown size has no lag", n)
	}
	if n := len(family(t, fams, "txsink_state").GetMetric()); n != 6 {
		t.Errorf("%d state series, want one per state (6)", n)
	}
}

// TestLastCommitBeforeFirst checks that before the first commit the last
// commit's time is the pipeline's start, not 0, so that time() minus it
// counts from the start (a "stuck" alert must not fire at once).
func TestLastCommitBeforeFirst(t *testing.T) {
	before := time.Now()
	m := metrics.New(&config.Config{Name: "fresh"})
	after := time.Now()
	reg := prometheus.NewPedanticRegistry()
	if err := m.Register(reg, fixedStatus{engine.Status{State: engine.StateRunning}}); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := sum(t, fams, "txsink_last_commit_timestamp_seconds", nil)
	if lo, hi := float64(before.UnixNano())/1e9, float64(after.UnixNano())/1e9; got < lo-1e-6 || got > hi+1e-6 {
		t.Errorf("txsink_last_commit_timestamp_seconds = %v before any commit, want the start, in [%v, %v]", got, lo, hi)
	}
}

// TestRegister checks that two pipelines share a registry, and that one
// pipeline cannot be registered twice.
func TestRegister(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	src := fixedStatus{engine.Status{State: engine.StateRunning}}
	a := metrics.New(&config.Config{Name: "a"})
	if err := a.Register(reg, src); err != nil {
		t.Fatal(err)
	}
	if err := metrics.New(&config.Config{Name: "b"}).Register(reg, src); err != nil {
		t.Errorf("a second pipeline on the same registry: %v", err)
	}
	if err := metrics.New(&config.Config{Name: "a"}).Register(reg, src); err == nil {
		t.Error("registering pipeline a twice succeeded")
	}
	a.OnChange(&changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Namespace: "x", Name: "y"}, Pos: changelog.Position{Partition: "p"}})
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for pipeline, want := range map[string]float64{"a": 1, "b": 0} {
		if got := sum(t, fams, "txsink_events_total", map[string]string{"pipeline": pipeline}); got != want {
			t.Errorf("events of pipeline %s = %v, want %v", pipeline, got, want)
		}
	}
}

// TestDocListsNames keeps the package doc and Names in step.
func TestDocListsNames(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "metrics.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	doc := f.Doc.Text()
	for _, name := range metrics.Names() {
		if !strings.Contains(doc, "\t"+name+"{") {
			t.Errorf("the package doc does not list %s", name)
		}
	}
}
