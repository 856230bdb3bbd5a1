package engine_test

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/statushttp"
)

// records is a slog handler that keeps every record, for a test to look
// for one.
type records struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *records) WithGroup(string) slog.Handler            { return r }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	r.recs = append(r.recs, rec.Clone())
	r.mu.Unlock()
	return nil
}

// find returns the attributes of the records whose message starts with
// msg.
func (r *records) find(msg string) []map[string]slog.Value {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]slog.Value
	for _, rec := range r.recs {
		if strings.HasPrefix(rec.Message, msg) {
			attrs := map[string]slog.Value{"level": slog.StringValue(rec.Level.String())}
			rec.Attrs(func(a slog.Attr) bool {
				attrs[a.Key] = a.Value
				return true
			})
			out = append(out, attrs)
		}
	}
	return out
}

// retried is an engine hook that hands each retry's attempt and wait to
// the test.
type retried chan [2]time.Duration

func (r retried) OnRetry(attempt int, wait time.Duration, _ error) {
	r <- [2]time.Duration{time.Duration(attempt), wait}
}

// TestTargetOutage puts a proxy between a following pipeline and the real
// server and takes the server away before the first commit: while the
// unit is retried /readyz answers 503 and /status says degraded, with the
// attempts so far and the last error; once the server is back the unit
// commits, one log line says the target recovered, after how long (the
// waits of the fake clock), in how many attempts and from what error, and
// the pipeline is ready and running again.
func TestTargetOutage(t *testing.T) {
	for _, d := range []string{"mysql", "postgres"} {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			db := testdb.Open(t, d)
			db.Exec(t, `CREATE TABLE t (id INT NOT NULL PRIMARY KEY, v VARCHAR(10) NOT NULL)`)
			proxy, url := db.Proxied(t)
			cfg := pipeline(db, config.Table{Source: "s.t"})
			cfg.Target.URL = url
			cfg.Source.Set("follow", true)
			cfg.Sink.FlushMaxRows = 1
			logs := &records{}
			retries := make(retried, 8)
			r := newClockRun(t, cfg, []string{`{"op":"+I","table":"s.t","row":{"id":1,"v":"a"}}`},
				engine.WithLogger(slog.New(logs)), engine.WithHooks(retries), engine.WithRandom(rand.NewPCG(5, 6)))
			h := statushttp.Handler(statushttp.Options{Source: r.e, TargetURL: url})
			get := func(path string) (int, string) {
				t.Helper()
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
				body, _ := io.ReadAll(rec.Result().Body)
				return rec.Code, string(body)
			}

			proxy.Down()
			r.start()
			at := clockStart
			var waited time.Duration
			for attempt := 1; attempt <= 2; attempt++ {
				got := <-retries
				if int(got[0]) != attempt {
					t.Fatalf("retry of attempt %d, want %d", got[0], attempt)
				}
				st := r.e.Status()
				if st.State != engine.StateDegraded || st.Retrying == nil || st.Retrying.Attempts != attempt ||
					!st.Retrying.Since.Equal(clockStart) || st.Retrying.LastError == "" || !st.Retrying.Next.Equal(at.Add(got[1])) {
					t.Fatalf("status during the outage, attempt %d: state %s, retrying %+v; want degraded, %d attempts since the start, the next at +%v",
						attempt, st.State, st.Retrying, attempt, at.Add(got[1]).Sub(clockStart))
				}
				// The error's text is the driver's; /readyz shows it after
				// "last error", with the target's password masked.
				if code, body := get("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "degraded") ||
					!strings.Contains(body, "last error: "+st.Retrying.LastError[:5]) {
					t.Errorf("/readyz during the outage = %d %q; want 503, degraded, with the last error", code, body)
				}
				if _, body := get("/status"); !strings.Contains(body, `"state": "degraded"`) || !strings.Contains(body, `"last_error"`) {
					t.Errorf("/status during the outage:\n%s", body)
				}
				if attempt == 2 {
					proxy.Up()
				}
				at = at.Add(got[1])
				waited += got[1]
				r.awaitDeadline(at)
				r.clock.Advance(got[1])
			}
			r.nextCommit()
			if got := query(t, db, "SELECT id, v FROM t"); got != "1|a" {
				t.Errorf("rows after the outage = %q, want 1|a", got)
			}
			rec := logs.find("target recovered")
			if len(rec) != 1 {
				t.Fatalf("%d 'target recovered' lines, want 1", len(rec))
			}
			if l := rec[0]; l["after"].Duration() != waited.Round(time.Millisecond) || l["attempts"].Int64() != 3 || l["last_err"].String() == "" || l["level"].String() != "INFO" {
				t.Errorf("recovered line %v; want after %v, 3 attempts, the last error, at info", l, waited.Round(time.Millisecond))
			}
			if code, body := get("/readyz"); code != http.StatusOK {
				t.Errorf("/readyz after the outage = %d %q, want 200", code, body)
			}
			if _, body := get("/status"); !strings.Contains(body, `"state": "running"`) || strings.Contains(body, "retrying") {
				t.Errorf("/status after the outage:\n%s", body)
			}
			if st := r.stop(); st.Retries != 2 || st.Commits != 1 {
				t.Errorf("%d retries, %d commits; want 2 and 1", st.Retries, st.Commits)
			}
		})
	}
}
