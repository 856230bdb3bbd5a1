// Package statushttp serves a pipeline's operational endpoints over HTTP,
// for Prometheus, load balancers, orchestrators and people:
//
//	/metrics  Prometheus text format, from the registry given (package metrics)
//	/healthz  200 while the process serves at all (liveness)
//	/readyz   200 while the pipeline is running, 503 with its state otherwise
//	          (degraded: a unit's commit is being retried, with its last error)
//	/status   observe.Status as indented JSON, with the target URL redacted
//
// Nothing it serves holds a credential: observe.Status holds no URL, the
// target is shown through config.RedactURL, and the target's password is
// masked in the stop error too, in case a driver's message quoted it.
package statushttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/observe"
)

// Source gives the pipeline's status; *engine.Engine is one.
type Source interface {
	Status() observe.Status
}

// Options says what the handler serves.
type Options struct {
	// Source is the pipeline whose status /readyz and /status report.
	Source Source
	// Gatherer is what /metrics serves; nil serves no /metrics.
	Gatherer prometheus.Gatherer
	// TargetURL is the pipeline's target URL. /status shows it with its
	// password hidden; it is also what the stop error is scrubbed of.
	TargetURL string
}

// Handler returns the handler of the endpoints the package doc lists.
func Handler(o Options) http.Handler {
	mux := http.NewServeMux()
	s := &server{o: o, secrets: secrets(o.TargetURL)}
	if o.Gatherer != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(o.Gatherer, promhttp.HandlerOpts{}))
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		text(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.HandleFunc("GET /status", s.status)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		text(w, http.StatusOK, "txsink: /metrics /healthz /readyz /status")
	})
	return mux
}

type server struct {
	o       Options
	secrets []string
}

func (s *server) readyz(w http.ResponseWriter, _ *http.Request) {
	st := s.o.Source.Status()
	if st.State != observe.StateRunning {
		// A load balancer or orchestrator reads only the code; the body
		// tells a person why.
		msg := "not ready: pipeline is " + string(st.State)
		if r := st.Retrying; r != nil {
			msg += fmt.Sprintf(": committing to the target failed %s since %s and is retried (next attempt at %s); last error: %s",
				times(r.Attempts), r.Since.UTC().Format(stamp), r.Next.UTC().Format(stamp), s.scrub(r.LastError))
		}
		text(w, http.StatusServiceUnavailable, msg)
		return
	}
	text(w, http.StatusOK, "ready: pipeline is running")
}

// stamp is how /readyz writes a time: to the millisecond, as a backoff's
// waits are.
const stamp = "2006-01-02T15:04:05.000Z07:00"

// times says how many times: "once", "3 times".
func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// scrub masks the target's passwords in msg, in case a driver's message
// quoted them.
func (s *server) scrub(msg string) string {
	for _, secret := range s.secrets {
		msg = strings.ReplaceAll(msg, secret, "xxxxx")
	}
	return msg
}

// statusDoc is /status: the engine's status, and the target it writes to.
type statusDoc struct {
	Target string `json:"target,omitempty"`
	observe.Status
}

func (s *server) status(w http.ResponseWriter, _ *http.Request) {
	doc := statusDoc{Status: s.o.Source.Status()}
	if s.o.TargetURL != "" {
		doc.Target = config.RedactURL(s.o.TargetURL)
	}
	doc.Error = s.scrub(doc.Error)
	if r := doc.Retrying; r != nil {
		scrubbed := *r
		scrubbed.LastError = s.scrub(r.LastError)
		doc.Retrying = &scrubbed
	}
	body, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(append(body, '\n'))
}

func text(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	fmt.Fprintln(w, msg)
}

// secrets returns the passwords raw holds: the user-info password, and
// the values of password query parameters, each as written and decoded.
// Values shorter than 4 characters are left alone: masking every "a" of a
// message would hide more than it protects.
func secrets(raw string) []string {
	var out []string
	add := func(s string) {
		if len(s) >= 4 {
			out = append(out, s)
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	if p, ok := u.User.Password(); ok {
		add(p)
		// A message may quote the URL as written, percent-encoded.
		if esc := strings.TrimPrefix(url.UserPassword("", p).String(), ":"); esc != p {
			add(esc)
		}
	}
	for k, vs := range u.Query() {
		if k := strings.ToLower(k); strings.Contains(k, "pass") || k == "pwd" {
			for _, v := range vs {
				add(v)
			}
		}
	}
	return out
}

// Server is a running status server.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan error

	once sync.Once
	err  error
}

// Start listens on addr (host:port; port 0 picks a free one) and serves h
// until Shutdown. It returns once the address is bound, so a busy port is
// an error here, not a log line later.
func Start(addr string, h http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{
		// A scrape that stalls must not hold a connection forever.
		srv:  &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute},
		ln:   ln,
		done: make(chan error, 1),
	}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Shutdown stops the server, letting requests in flight finish until ctx
// ends, then closing what is left. Later calls return the first's result.
func (s *Server) Shutdown(ctx context.Context) error {
	s.once.Do(func() {
		err := s.srv.Shutdown(ctx)
		if err != nil {
			s.srv.Close()
		}
		if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
		s.err = err
	})
	return s.err
}
