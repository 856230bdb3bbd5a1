package flinkjson

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
)

var (
	testPos   = changelog.Position{Partition: "p0.jsonl", Offset: 4096, Seq: 10}
	testOpts  = format.Options{OptionTable: "shop.orders"}
	testTable = changelog.Table{Namespace: "shop", Name: "orders"}
)

// decodeErr decodes a record that must fail, and checks the error is a
// complete *format.Error.
func decodeErr(t *testing.T, d *Decoder, r []byte) *format.Error {
	t.Helper()
	cs, err := d.Decode(r, testPos)
	if err == nil {
		t.Fatalf("Decode(%s) = %v, want an error", r, cs)
	}
	if cs != nil {
		t.Errorf("Decode returned changes %v with the error", cs)
	}
	var fe *format.Error
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a *format.Error", err, err)
	}
	if fe.Pos != testPos || fe.Format != Name || fe.Reason == "" || fe.Hint == "" || fe.Table != "shop.orders" {
		t.Errorf("incomplete error %#v", fe)
	}
	if msg := fe.Error(); !strings.HasPrefix(msg, Name+": p0.jsonl:10: table shop.orders: ") || !strings.Contains(msg, fe.Hint) {
		t.Errorf("Error() = %q, want it to start with the position and table and hold the hint", msg)
	}
	return fe
}

func TestDecodeOps(t *testing.T) {
	d := newDecoder(t, testOpts)
	row := changelog.RowOf("id", changelog.Number("1"), "name", "a", "doc", changelog.JSON(`{"k":[1]}`), "ok", true, "n", nil)
	const data = `"data":{"id":1,"name":"a","doc":{"k":[1]},"ok":true,"n":null}`
	for _, tc := range []struct {
		op            string
		kind          changelog.Kind
		before, after changelog.Row
	}{
		{"+I", changelog.Insert, changelog.Row{}, row},
		{"-U", changelog.UpdateBefore, row, changelog.Row{}},
		{"+U", changelog.UpdateAfter, changelog.Row{}, row},
		{"-D", changelog.Delete, row, changelog.Row{}},
	} {
		t.Run(tc.op, func(t *testing.T) {
			for _, r := range []string{`{` + data + `,"op":"` + tc.op + `"}`, `{"op":"` + tc.op + `","ts_ms":1,` + data + `}`} {
				cs, err := d.Decode([]byte(r), testPos)
				if err != nil || len(cs) != 1 {
					t.Fatalf("Decode(%s) = %v, %v; want one change", r, cs, err)
				}
				c := cs[0]
				if c.Kind != tc.kind || c.Table != testTable || c.Pos != testPos || int(c.Size) != len(r) {
					t.Errorf("kind, table, pos, size = %v, %v, %v, %d", c.Kind, c.Table, c.Pos, c.Size)
				}
				if !reflect.DeepEqual(c.Before, tc.before) || !reflect.DeepEqual(c.After, tc.after) {
					t.Errorf("Before, After = %#v, %#v; want %#v, %#v", c.Before, c.After, tc.before, tc.after)
				}
			}
		})
	}
}

func TestDecodeNoChange(t *testing.T) {
	d := newDecoder(t, testOpts)
	for _, r := range []string{"", " \n", "null"} {
		cs, err := d.Decode([]byte(r), testPos)
		if err != nil || cs != nil {
			t.Errorf("Decode(%q) = %v, %v; want no change, no error", r, cs, err)
		}
	}
}

func TestDecodeDoesNotRetainInput(t *testing.T) {
	r := []byte(`{"data":{"id":1,"name":"abc"},"op":"+I"}`)
	cs, err := newDecoder(t, testOpts).Decode(r, testPos)
	if err != nil {
		t.Fatal(err)
	}
	for i := range r {
		r[i] = 'X'
	}
	if v, _ := cs[0].After.Get("name"); v != "abc" {
		t.Errorf("After name = %v after overwriting the input", v)
	}
}

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		table string
		want  changelog.Table
	}{
		{"shop.orders", testTable},
		{" shop.orders ", testTable},
		{"orders", changelog.Table{Name: "orders"}},
		{"a.b.c", changelog.Table{Namespace: "a", Name: "b.c"}},
	} {
		d, err := New(format.Options{OptionTable: tc.table})
		if err != nil || d.Table() != tc.want {
			t.Errorf("New with table %q: %v, %v; want %#v", tc.table, d, err, tc.want)
		}
	}
	for _, tc := range []struct {
		opts format.Options
		err  string
	}{
		{nil, OptionTable + " is required"},
		{format.Options{}, OptionTable + " is required"},
		{format.Options{OptionTable: ""}, `want a table as "namespace.name"`},
		{format.Options{OptionTable: "shop."}, `want a table as "namespace.name"`},
		{format.Options{OptionTable: "shop.orders", "flink-changelog-json.x": "1"}, `"flink-changelog-json.x"`},
	} {
		d, err := New(tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.err) || d != nil {
			t.Errorf("New(%v) = %v, %v; want an error containing %q", tc.opts, d, err, tc.err)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	d := newDecoder(t, testOpts)
	for _, tc := range []struct {
		name, rec    string
		reason, hint string
	}{
		{"truncated JSON", `{"data":{"id":1},"op":"+I"`, "invalid JSON", "changelog-json row in JSON"},
		{"trailing data", `{"data":{"id":1},"op":"+I"}]`, "invalid JSON", "JSON"},
		{"bad escape", `{"data":{"id":"\x"},"op":"+I"}`, "invalid JSON", "JSON"},
		{"not an object", `[{"data":{"id":1},"op":"+I"}]`, "record is a JSON array", "JSON"},
		{"no op", `{"data":{"id":1}}`, `no "op" field`, `"op":"+I"`},
		{"unknown op", `{"data":{"id":1},"op":"+X"}`, `unknown op "+X"`, `"+I" (insert)`},
		{"debezium op", `{"data":{"id":1},"op":"c"}`, `unknown op "c"`, `"-D" (delete)`},
		{"op not a string", `{"data":{"id":1},"op":1}`, `"op" must be a string, not a number`, "changelog-json row"},
		{"op null", `{"data":{"id":1},"op":null}`, `"op" must be a string, not a null`, "changelog-json row"},
		{"no data", `{"op":"+I"}`, `no "data"`, `"data"`},
		{"data null", `{"data":null,"op":"-D"}`, `no "data"`, `"data"`},
		{"data an array", `{"data":[{"id":1}],"op":"+I"}`, `"data" must be an object or null, not a array`, "changelog-json row"},
		{"data empty", `{"data":{},"op":"+I"}`, `"data" has no columns`, "changelog-json row"},
		{"duplicate column", `{"data":{"id":1,"id":2},"op":"+I"}`, `"data": duplicate column "id"`, "changelog-json row"},
		{"duplicate field", `{"data":{"id":1},"op":"+I","op":"-D"}`, `field "op" appears twice`, "changelog-json row"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe := decodeErr(t, d, []byte(tc.rec))
			if !strings.Contains(fe.Reason, tc.reason) {
				t.Errorf("Reason = %q, want it to contain %q", fe.Reason, tc.reason)
			}
			if !strings.Contains(fe.Hint, tc.hint) {
				t.Errorf("Hint = %q, want it to contain %q", fe.Hint, tc.hint)
			}
		})
	}
}

func TestConcurrentDecode(t *testing.T) {
	d := newDecoder(t, testOpts)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			op := []string{"+I", "-D"}[g%2]
			r := []byte(`{"data":{"id":1},"op":"` + op + `"}`)
			for range 200 {
				cs, err := d.Decode(r, testPos)
				if err != nil || len(cs) != 1 || cs[0].Kind.String() != op {
					t.Errorf("goroutine %d: %v, %v", g, cs, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
