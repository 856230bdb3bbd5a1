package statushttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/format/native"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
	"github.com/txsink/txsink/metrics"
	"github.com/txsink/txsink/sink/sqlsink/sqlite"
	"github.com/txsink/txsink/statushttp"
)

// secret is the password of the test pipeline's target URL; no endpoint
// may ever show it.
const secret = "s3cr3t-Pa55"

// get requests path from h and returns the code and body.
func get(t *testing.T, h http.Handler, method, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

// newPipeline builds a real engine on SQLite whose configured target URL
// is a MySQL URL with a password: the engine writes to an already opened
// SQLite target (engine.WithTarget), so the URL is shown, never dialled.
func newPipeline(t *testing.T, opts ...engine.Option) (*engine.Engine, *config.Config, *prometheus.Registry) {
	t.Helper()
	db := testdb.SQLite(t)
	db.Exec(t, workload.Schema("sqlite")...)
	res := workload.Generate(workload.Spec{Orders: 50, Seed: 3, Events: true})
	var data, line []byte
	for i := range res.Partitions[0] {
		var err error
		if line, err = native.Append(line[:0], &res.Partitions[0][i]); err != nil {
			t.Fatal(err)
		}
		data = append(data, line...)
	}
	path := filepath.Join(t.TempDir(), "p0.jsonl")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Name = "status-test"
	cfg.Source = config.Source{Type: "file", Format: "txsink-json"}
	cfg.Source.Set("paths", []string{path})
	cfg.Target.URL = "mysql://app:" + secret + "@db.example:3306/shop?tls=true"
	cfg.Tables = []config.Table{
		{Source: "shop.orders"},
		{Source: "shop.order_items", PrimaryKey: []string{"order_id", "line_no"}},
		{Source: "shop.order_events", AppendOnly: true},
	}
	cfg.Sink.FlushMaxRows = 50
	cfg.Sink.FlushInterval = 0
	// Commits at every 50 rows, several of them while the run reads.
	cfg.Sink.FlushCoalesce = false
	tgt, err := sqlite.Open(context.Background(), strings.TrimPrefix(db.URL, "sqlite://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close() })
	m := metrics.New(&cfg)
	e, err := engine.New(context.Background(), &cfg, append([]engine.Option{engine.WithTarget(tgt), engine.WithHooks(m)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	reg := prometheus.NewRegistry()
	if err := m.Register(reg, e); err != nil {
		t.Fatal(err)
	}
	return e, &cfg, reg
}

// afterCommit is an engine hook that calls f after each successful
// commit.
type afterCommit func()

func (f afterCommit) OnCommit(info engine.CommitInfo) {
	if info.Err == nil {
		f()
	}
}

// TestLifecycle checks every endpoint before, during and after a real run.
func TestLifecycle(t *testing.T) {
	var h http.Handler
	type seen struct {
		code int
		body string
	}
	var during []seen
	e, cfg, reg := newPipeline(t, engine.WithHooks(afterCommit(func() {
		// Called after each commit, while the pipeline runs or stops.
		code, body := get(t, h, "GET", "/readyz")
		during = append(during, seen{code, body})
	})))
	h = statushttp.Handler(statushttp.Options{Source: e, Gatherer: reg, TargetURL: cfg.Target.URL})

	if code, body := get(t, h, "GET", "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "starting") {
		t.Errorf("/readyz before Run = %d %q, want 503 naming the state", code, body)
	}
	if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(during) < 2 {
		t.Fatalf("%d commits; the test needs several", len(during))
	}
	// Commits run beside the loop: the first is made while running, the
	// last (the final flush) while stopping, and once the pipeline is
	// stopping it never reads as ready again.
	if first := during[0]; first.code != http.StatusOK {
		t.Errorf("/readyz at the first commit = %d %q, want 200", first.code, first.body)
	}
	if last := during[len(during)-1]; last.code != http.StatusServiceUnavailable || !strings.Contains(last.body, "stopping") {
		t.Errorf("/readyz in the final flush = %d %q, want 503 stopping", last.code, last.body)
	}
	stopping := false
	for _, s := range during {
		switch {
		case s.code == http.StatusOK && !stopping:
		case s.code == http.StatusServiceUnavailable && strings.Contains(s.body, "stopping"):
			stopping = true
		default:
			t.Errorf("/readyz during the run = %d %q (after stopping: %v)", s.code, s.body, stopping)
		}
	}

	tests := []struct {
		method, path string
		code         int
		contains     string
	}{
		{"GET", "/healthz", 200, "ok"},
		{"GET", "/readyz", 503, "stopped"},
		{"GET", "/metrics", 200, `txsink_commits_total{pipeline="status-test",result="ok"}`},
		{"GET", "/metrics", 200, `txsink_state{pipeline="status-test",state="stopped"} 1`},
		{"GET", "/status", 200, `"state": "stopped"`},
		{"GET", "/status", 200, `"target": "mysql://app:xxxxx@db.example:3306/shop?tls=true"`},
		{"GET", "/", 200, "/metrics"},
		{"HEAD", "/healthz", 200, ""},
		{"POST", "/status", 405, ""},
		{"GET", "/nothing", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+tt.path, func(t *testing.T) {
			code, body := get(t, h, tt.method, tt.path)
			if code != tt.code || !strings.Contains(body, tt.contains) {
				t.Errorf("%s %s = %d, want %d holding %q:\n%s", tt.method, tt.path, code, tt.code, tt.contains, body)
			}
			if strings.Contains(body, secret) {
				t.Errorf("%s %s shows the target's password:\n%s", tt.method, tt.path, body)
			}
		})
	}

	// /status is engine.Status, field for field.
	_, body := get(t, h, "GET", "/status")
	var got engine.Status
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("/status is not JSON: %v\n%s", err, body)
	}
	want := e.Status()
	if got.Pipeline != want.Pipeline || got.State != want.State || got.Stats.Commits != want.Stats.Commits ||
		got.Stats.Upserted != want.Stats.Upserted || len(got.Partitions) != 1 ||
		got.Partitions[0].Committed != want.Partitions[0].Committed || !got.LastCommit.Equal(want.LastCommit) {
		t.Errorf("/status = %+v\nwant %+v", got, want)
	}
	if !strings.Contains(body, "\n  \"pipeline\"") {
		t.Errorf("/status is not indented:\n%s", body)
	}
}

type fixedStatus struct{ st engine.Status }

func (f fixedStatus) Status() engine.Status { return f.st }

// TestStatusHidesPasswords checks that /status shows no password of the
// target URL, in the target or in a stop error that quotes it.
func TestStatusHidesPasswords(t *testing.T) {
	tests := []struct {
		name, url, leak string
	}{
		{"user info", "mysql://app:" + secret + "@db:3306/shop", secret},
		{"encoded user info", "postgres://app:p%40ss%2Fw0rd@db/shop", "p%40ss%2Fw0rd"},
		{"decoded user info", "postgres://app:p%40ss%2Fw0rd@db/shop", "p@ss/w0rd"},
		{"query parameter", "postgres://db/shop?user=app&password=" + secret, secret},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := fixedStatus{engine.Status{Pipeline: "p", State: engine.StateFailed,
				Error: fmt.Sprintf("connect %s: password %s refused", tt.url, tt.leak)}}
			h := statushttp.Handler(statushttp.Options{Source: src, TargetURL: tt.url})
			code, body := get(t, h, "GET", "/status")
			if code != http.StatusOK {
				t.Fatalf("/status = %d", code)
			}
			if strings.Contains(body, tt.leak) {
				t.Errorf("/status shows %q:\n%s", tt.leak, body)
			}
			if !strings.Contains(body, "xxxxx") || !strings.Contains(body, "refused") {
				t.Errorf("/status lost the redacted error:\n%s", body)
			}
		})
	}
}

// TestServer checks Start and Shutdown on a real socket, and that a busy
// address is an error at Start.
func TestServer(t *testing.T) {
	h := statushttp.Handler(statushttp.Options{Source: fixedStatus{engine.Status{State: engine.StateRunning}}})
	s, err := statushttp.Start("127.0.0.1:0", h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	url := "http://" + s.Addr().String()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz = %d, want 200", resp.StatusCode)
	}
	if _, err := statushttp.Start(s.Addr().String(), h); err == nil {
		t.Errorf("a second server on %s started", s.Addr())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	client.CloseIdleConnections()
	if resp, err := client.Get(url + "/healthz"); err == nil {
		resp.Body.Close()
		t.Errorf("the server answered after Shutdown")
	}
}

// TestDegraded checks /readyz and /status while a unit's commit is being
// retried: not ready, with the attempts, since when, the next attempt and
// the last error, its password masked; and ready again once no unit is.
func TestDegraded(t *testing.T) {
	since := time.Date(2026, 3, 2, 10, 15, 4, 0, time.UTC)
	url := "mysql://app:" + secret + "@db:3306/shop"
	retrying := &engine.RetryStatus{Attempts: 3, Since: since, Next: since.Add(1500 * time.Millisecond),
		LastError: "dial tcp db:3306 (" + url + "): connection refused"}
	tests := []struct {
		name       string
		st         engine.Status
		readyCode  int
		readyBody  []string
		statusBody []string
	}{
		{"degraded", engine.Status{Pipeline: "p", State: engine.StateDegraded, Retrying: retrying}, 503,
			[]string{"not ready: pipeline is degraded: committing to the target failed 3 times since 2026-03-02T10:15:04.000Z and is retried (next attempt at 2026-03-02T10:15:05.500Z); last error: dial tcp db:3306 (mysql://app:xxxxx@db:3306/shop): connection refused"},
			[]string{`"state": "degraded"`, `"attempts": 3`, `"since": "2026-03-02T10:15:04Z"`, `"last_error": "dial tcp db:3306 (mysql://app:xxxxx@db:3306/shop): connection refused"`}},
		{"once", engine.Status{Pipeline: "p", State: engine.StateDegraded, Retrying: &engine.RetryStatus{Attempts: 1, Since: since, Next: since, LastError: "deadlock"}}, 503,
			[]string{"failed once since"}, []string{`"attempts": 1`}},
		{"stopping while retried", engine.Status{Pipeline: "p", State: engine.StateStopping, Retrying: retrying}, 503,
			[]string{"not ready: pipeline is stopping: committing to the target failed 3 times"}, []string{`"state": "stopping"`, `"retrying"`}},
		{"recovered", engine.Status{Pipeline: "p", State: engine.StateRunning}, 200,
			[]string{"ready: pipeline is running"}, []string{`"state": "running"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := statushttp.Handler(statushttp.Options{Source: fixedStatus{tt.st}, TargetURL: url})
			code, body := get(t, h, "GET", "/readyz")
			if code != tt.readyCode {
				t.Errorf("/readyz = %d, want %d: %s", code, tt.readyCode, body)
			}
			for _, want := range tt.readyBody {
				if !strings.Contains(body, want) {
					t.Errorf("/readyz = %q, want it to hold %q", body, want)
				}
			}
			_, status := get(t, h, "GET", "/status")
			for _, want := range tt.statusBody {
				if !strings.Contains(status, want) {
					t.Errorf("/status does not hold %q:\n%s", want, status)
				}
			}
			if tt.st.Retrying == nil && strings.Contains(status, "retrying") {
				t.Errorf("/status says retrying with no unit retried:\n%s", status)
			}
			for _, b := range []string{body, status} {
				if strings.Contains(b, secret) {
					t.Errorf("the target's password is shown:\n%s", b)
				}
			}
		})
	}
}
