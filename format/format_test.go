package format

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
)

func TestErrorMessage(t *testing.T) {
	pos := changelog.Position{Partition: "p0.jsonl", Offset: 812, Seq: 10}
	for _, tc := range []struct {
		err  *Error
		want string
	}{
		{&Error{Pos: pos, Format: "debezium-json", Table: "inventory.products", Reason: `update event has no "before" image`, Hint: "set REPLICA IDENTITY FULL"},
			`debezium-json: p0.jsonl:10: table inventory.products: update event has no "before" image: set REPLICA IDENTITY FULL`},
		{&Error{Pos: pos, Format: "txsink-json", Reason: "invalid JSON", Err: io.ErrUnexpectedEOF, Hint: "one object per line"},
			`txsink-json: p0.jsonl:10: invalid JSON: unexpected EOF: one object per line`},
		{&Error{Format: "txsink-json", Reason: "bad"}, `txsink-json: bad`},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() =\n%s\nwant\n%s", got, tc.want)
		}
	}
	var err error = &Error{Format: "f", Reason: "r", Err: io.ErrUnexpectedEOF}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Error("errors.Is does not see the wrapped error")
	}
}

func TestOptionsCheck(t *testing.T) {
	for _, tc := range []struct {
		opts  Options
		known []string
		want  string
	}{
		{nil, nil, ""},
		{Options{"a.x": "1"}, []string{"a.x", "a.y"}, ""},
		{Options{"a.z": "1", "a.b": "2"}, []string{"a.x"}, `format f: unknown format option "a.b" (known options: a.x)`},
		{Options{"a.z": "1"}, nil, `format f: unknown format option "a.z" (this format takes no options)`},
	} {
		err := tc.opts.Check("f", tc.known...)
		if got := ""; err != nil {
			got = err.Error()
			if got != tc.want {
				t.Errorf("Check(%v) = %q, want %q", tc.opts, got, tc.want)
			}
		} else if tc.want != "" {
			t.Errorf("Check(%v) = nil, want %q", tc.opts, tc.want)
		}
	}
}

func TestOptionsBool(t *testing.T) {
	o := Options{"t": "true", "f": " false ", "one": "1", "bad": "yes"}
	for _, tc := range []struct {
		key      string
		def      bool
		want     bool
		wantFail bool
	}{
		{"t", false, true, false}, {"f", true, false, false}, {"one", false, true, false},
		{"missing", true, true, false}, {"missing", false, false, false}, {"bad", false, false, true},
	} {
		got, err := o.Bool("f", tc.key, tc.def)
		if got != tc.want || (err != nil) != tc.wantFail {
			t.Errorf("Bool(%q, %v) = %v, %v", tc.key, tc.def, got, err)
		}
		if err != nil && !strings.Contains(err.Error(), tc.key) {
			t.Errorf("error %q does not name the option", err)
		}
	}
}
