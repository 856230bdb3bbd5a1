package source

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestAwait checks Await's outcomes: an answer after failed tries, an
// error that is not waited out, a wait that ends without an answer (the
// error naming what, how long and what to check), no wait at all, and the
// caller's context ending.
func TestAwait(t *testing.T) {
	first, most := awaitFirstRetry, awaitMaxRetry
	awaitFirstRetry, awaitMaxRetry = time.Millisecond, time.Millisecond
	t.Cleanup(func() { awaitFirstRetry, awaitMaxRetry = first, most })

	refused := errors.New("connection refused")
	denied := errors.New("access denied")
	waitable := func(err error) bool { return errors.Is(err, refused) }
	tests := []struct {
		name    string
		timeout time.Duration
		// fails is how many tries fail (with failErr) before one succeeds;
		// -1 never succeeds.
		fails   int
		failErr error
		cancel  bool // the caller's context is cancelled at the first try
		// want is the error's text (its parts), "" for nil; tries is how
		// many tries Await made; logs what its log holds.
		want  []string
		tries int
		logs  []string
	}{
		{name: "answers after two refusals", timeout: time.Hour, fails: 2, failErr: refused, tries: 3,
			logs: []string{`msg="waiting for the server at 1.2.3.4:5 to answer" err="connection refused"`, `msg="the server at 1.2.3.4:5 answered"`, "tries=3"}},
		{name: "an answer that refuses is not waited out", timeout: time.Hour, fails: -1, failErr: denied, tries: 1,
			want: []string{"access denied"}},
		{name: "no answer within the timeout", timeout: 20 * time.Millisecond, fails: -1, failErr: refused,
			want: []string{"the server at 1.2.3.4:5 did not answer within startup-timeout (20ms, ", " tries): connection refused; check the server"}},
		{name: "timeout 0 tries once", timeout: 0, fails: -1, failErr: refused, tries: 1,
			want: []string{"connection refused"}},
		{name: "the caller stops", timeout: time.Hour, fails: -1, failErr: refused, cancel: true, tries: 1,
			want: []string{context.Canceled.Error()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var logs bytes.Buffer
			tries := 0
			err := Await(ctx, Wait{What: "the server at 1.2.3.4:5", Timeout: tt.timeout, Hint: "check the server",
				Log: slog.New(slog.NewTextHandler(&logs, nil))},
				func(context.Context) error {
					tries++
					if tt.cancel {
						cancel()
					}
					if tt.fails < 0 || tries <= tt.fails {
						return tt.failErr
					}
					return nil
				}, waitable)
			switch {
			case len(tt.want) == 0 && err != nil:
				t.Fatalf("Await = %v, want nil", err)
			case len(tt.want) > 0 && err == nil:
				t.Fatalf("Await = nil, want an error holding %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Await = %q, want it to hold %q", err, w)
				}
			}
			if tt.failErr != nil && err != nil && !tt.cancel && !errors.Is(err, tt.failErr) {
				t.Errorf("Await = %v, which does not wrap the last error", err)
			}
			if tt.tries > 0 && tries != tt.tries {
				t.Errorf("%d tries, want %d", tries, tt.tries)
			}
			for _, l := range tt.logs {
				if !strings.Contains(logs.String(), l) {
					t.Errorf("the log does not hold %q:\n%s", l, logs.String())
				}
			}
		})
	}
}
