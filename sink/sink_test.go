package sink_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/sink"
)

// TestErrorClassifies: a *sink.Error says its Kind and place through
// errkind, wrapped or not, and RefusedRow finds a refused row only with
// its position.
func TestErrorClassifies(t *testing.T) {
	at := changelog.Position{Partition: "p0", Offset: 400, Seq: 4}
	cause := errors.New("boom")
	for _, tc := range []struct {
		name    string
		err     *sink.Error
		kind    errkind.Kind
		refused bool
	}{
		{"transient", &sink.Error{Op: "apply", Transient: true, Err: cause}, errkind.Transient, false},
		{"given up", &sink.Error{Op: "apply", Transient: true, GaveUp: true, Retries: 3, Err: cause}, errkind.Transient, false},
		{"refused row", &sink.Error{Op: "write", Table: "b", Key: "(2)", At: at, Pos: "p0:4", Refused: true, Err: cause}, errkind.BadInput, true},
		{"refused, no position", &sink.Error{Op: "write", Table: "b", Refused: true, Err: cause}, errkind.BadInput, false},
		{"fenced", &sink.Error{Op: "commit", Err: sink.ErrFenced}, errkind.Permanent, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wrapped := errors.Join(errors.New("context"), tc.err)
			if k := errkind.Of(wrapped); k != tc.kind {
				t.Errorf("Kind = %v, want %v", k, tc.kind)
			}
			w, ok := errkind.WhereOf(wrapped)
			if !ok || w.Table != tc.err.Table || w.Key != tc.err.Key || w.Pos != tc.err.At {
				t.Errorf("Where = %+v, %v; want the error's table, key and position", w, ok)
			}
			if _, refused := sink.RefusedRow(wrapped); refused != tc.refused {
				t.Errorf("RefusedRow = %v, want %v", refused, tc.refused)
			}
		})
	}
}

// TestErrorMessage: the message names position, operation, table and key,
// then says whether txsink retries, gave up, or what to do.
func TestErrorMessage(t *testing.T) {
	cause := errors.New("boom")
	for _, tc := range []struct {
		err  *sink.Error
		want string
	}{
		{&sink.Error{Op: "write", Table: "b", Key: "(2)", Pos: "p0:4", Hint: "fix it", Err: cause}, "p0:4: write b key (2): boom; fix it"},
		{&sink.Error{Op: "apply", Transient: true, Err: cause}, "apply: boom (transient: txsink retries)"},
		{&sink.Error{Op: "apply", Transient: true, GaveUp: true, Retries: 3, Err: cause}, "apply: boom (transient, but it persisted through 3 retries (sink.max-retries) and txsink gave up; check the server, then run again)"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

// fakeDriver is a Driver that opens nothing, for the registry's tests.
type fakeDriver struct{}

func (fakeDriver) Open(context.Context, string, sink.Env) (sink.Sink, error) {
	return nil, errors.New("fake: opens nothing")
}

// TestRegistry: a registered scheme is found whatever its case, an unknown
// one is refused listing the registered ones, and registering a scheme
// twice panics.
func TestRegistry(t *testing.T) {
	sink.Register("sinktest-fake", fakeDriver{})
	if _, err := sink.Open(context.Background(), "SinkTest-Fake://x", ""); err == nil || err.Error() != "fake: opens nothing" {
		t.Errorf("Open of a registered scheme: err = %v, want the driver's", err)
	}
	_, err := sink.OpenReadOnly(context.Background(), "oracle://x", "")
	if err == nil || !strings.Contains(err.Error(), `unknown scheme "oracle"`) || !strings.Contains(err.Error(), "sinktest-fake://") {
		t.Errorf("Open of an unknown scheme: err = %v, want one listing the registered schemes", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("a second Register of a scheme did not panic")
		}
	}()
	sink.Register("sinktest-fake", fakeDriver{})
}
