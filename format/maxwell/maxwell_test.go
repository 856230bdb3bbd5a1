package maxwell

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/internal/decodetest"
)

var testPos = changelog.Position{Partition: "p0.jsonl", Offset: 4096, Seq: 10}

// rec builds a record of table test.orders; rest is JSON members.
func rec(typ, rest string) []byte {
	return []byte(`{"database":"test","table":"orders","type":"` + typ + `","ts":1596684883` + rest + `}`)
}

// decodeOne decodes a record that must give exactly one change.
func decodeOne(t *testing.T, d *Decoder, r []byte) changelog.Change {
	t.Helper()
	cs, err := d.Decode(r, testPos)
	if err != nil {
		t.Fatalf("Decode(%s): %v", r, err)
	}
	if len(cs) != 1 {
		t.Fatalf("Decode(%s) gave %d changes, want 1", r, len(cs))
	}
	c := cs[0]
	if c.Pos != testPos || int(c.Size) != len(r) {
		t.Errorf("Pos, Size = %v, %d; want %v, %d", c.Pos, c.Size, testPos, len(r))
	}
	return c
}

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
	if fe.Pos != testPos || fe.Format != Name || fe.Reason == "" || fe.Hint == "" {
		t.Errorf("incomplete error %#v", fe)
	}
	if msg := fe.Error(); !strings.HasPrefix(msg, Name+": p0.jsonl:10: ") || !strings.Contains(msg, fe.Hint) {
		t.Errorf("Error() = %q, want it to start with the position and hold the hint", msg)
	}
	return fe
}

func TestDecodeTypes(t *testing.T) {
	d := newDecoder(t, nil)
	row := changelog.RowOf("id", changelog.Number("1"), "name", "a", "doc", changelog.JSON(`{"k":[1]}`), "ok", true, "n", nil)
	const data = `,"data":{"id":1,"name":"a","doc":{"k":[1]},"ok":true,"n":null}`
	for _, tc := range []struct {
		name          string
		rec           []byte
		kind          changelog.Kind
		before, after changelog.Row
		txn           string
		end           bool
	}{
		{"insert", rec("insert", `,"xid":7,"xoffset":0`+data), changelog.Insert, changelog.Row{}, row, "7", false},
		{"bootstrap insert", rec("bootstrap-insert", data), changelog.Insert, changelog.Row{}, row, "", false},
		{"update", rec("update", `,"xid":"8","commit":true`+data+`,"old":{"name":"b","n":5,"gone":"x"}`), changelog.UpdateAfter,
			changelog.RowOf("id", changelog.Number("1"), "name", "b", "doc", changelog.JSON(`{"k":[1]}`), "ok", true, "n", changelog.Number("5"), "gone", "x"),
			row, "8", true},
		{"update without old", rec("update", data+`,"old":null`), changelog.UpdateAfter, row, row, "", false},
		{"key change", rec("update", `,"data":{"id":2},"old":{"id":1}`), changelog.UpdateAfter,
			changelog.RowOf("id", changelog.Number("1")), changelog.RowOf("id", changelog.Number("2")), "", false},
		{"delete", rec("delete", `,"commit":false`+data), changelog.Delete, row, changelog.Row{}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := decodeOne(t, d, tc.rec)
			if c.Kind != tc.kind || c.Table != (changelog.Table{Namespace: "test", Name: "orders"}) || c.TxnID != tc.txn || c.TxnEnd != tc.end {
				t.Errorf("kind, table, txn, end = %v, %v, %q, %v; want %v, test.orders, %q, %v", c.Kind, c.Table, c.TxnID, c.TxnEnd, tc.kind, tc.txn, tc.end)
			}
			if !reflect.DeepEqual(c.Before, tc.before) {
				t.Errorf("Before = %#v, want %#v", c.Before, tc.before)
			}
			if !reflect.DeepEqual(c.After, tc.after) {
				t.Errorf("After = %#v, want %#v", c.After, tc.after)
			}
		})
	}
}

// TestDecodeUpdateImagesIndependent: the before image is a copy, so
// changing it leaves the after image alone.
func TestDecodeUpdateImagesIndependent(t *testing.T) {
	c := decodeOne(t, newDecoder(t, nil), rec("update", `,"data":{"id":1,"a":"new"},"old":{"a":"old"}`))
	c.Before.Values[0] = "changed"
	if v, _ := c.After.Get("id"); v != changelog.Number("1") {
		t.Errorf("After id = %v after changing Before", v)
	}
	if v, _ := c.After.Get("a"); v != "new" {
		t.Errorf("After a = %v, want new", v)
	}
}

func TestDecodeNoChange(t *testing.T) {
	d := newDecoder(t, nil)
	for _, r := range []string{
		"", " \n", "null",
		`{"database":"test","table":"orders","type":"bootstrap-start","ts":1,"data":{}}`,
		`{"database":"test","table":"orders","type":"bootstrap-complete","ts":1,"data":{}}`,
	} {
		cs, err := d.Decode([]byte(r), testPos)
		if err != nil || cs != nil {
			t.Errorf("Decode(%q) = %v, %v; want no change, no error", r, cs, err)
		}
	}
	if got := d.Skipped(); got != 2 {
		t.Errorf("Skipped() = %d, want 2 (tombstones are not counted)", got)
	}
}

// TestDecodeDDL decodes the DDL records Maxwell writes with output_ddl
// (testdata/ddl.jsonl: table-create, table-alter, table-drop and the
// database ones): each is one row-less SchemaChange change naming its
// table, or its database alone, which the engine skips and counts; never
// an error, never a row (a table-alter's "old" is the old definition, not
// a row's old values).
func TestDecodeDDL(t *testing.T) {
	d := newDecoder(t, nil)
	e, shop := changelog.Table{Namespace: "test", Name: "e"}, changelog.Table{Namespace: "shop"}
	want := []changelog.Table{e, e, e, shop, shop, shop}
	decodetest.SchemaChanges(t, d, filepath.Join("testdata", "ddl.jsonl"), want)
}

func TestDecodeDoesNotRetainInput(t *testing.T) {
	r := rec("update", `,"data":{"id":1,"name":"abc"},"old":{"name":"xyz"}`)
	c := decodeOne(t, newDecoder(t, nil), r)
	for i := range r {
		r[i] = 'X'
	}
	if v, _ := c.After.Get("name"); v != "abc" {
		t.Errorf("After name = %v after overwriting the input", v)
	}
	if v, _ := c.Before.Get("name"); v != "xyz" || c.Table.Name != "orders" {
		t.Errorf("Before name = %v, table %v after overwriting the input", v, c.Table)
	}
}

func TestNewOptions(t *testing.T) {
	if _, err := New(format.Options{"maxwell.x": "1"}); err == nil || !strings.Contains(err.Error(), `"maxwell.x"`) {
		t.Errorf("New with an unknown option: %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	d := newDecoder(t, nil)
	for _, tc := range []struct {
		name, rec           string
		reason, hint, table string
	}{
		{"truncated JSON", `{"database":"test","table":"orders","type":"insert","data":{"id":1`, "invalid JSON", "Maxwell row event in JSON", "test.orders"},
		{"trailing data", string(rec("insert", `,"data":{"id":1}`)) + `{}`, "invalid JSON", "JSON", "test.orders"},
		{"bad escape before table", `{"type":"in\xsert","database":"test","table":"orders"}`, "invalid JSON", "JSON", ""},
		{"not an object", `[1,2]`, "record is a JSON array", "JSON", ""},
		{"a number", `7`, "record is a JSON number", "JSON", ""},
		{"no type", `{"database":"test","table":"orders","data":{"id":1}}`, `no "type" field`, "Maxwell", "test.orders"},
		{"unknown type", string(rec("upsert", `,"data":{"id":1}`)), `unknown type "upsert"`, `"insert"`, "test.orders"},
		{"type not a string", `{"database":"test","table":"orders","type":1,"data":{"id":1}}`, `"type" must be a string`, "Maxwell row event", "test.orders"},
		{"type null", `{"database":"test","table":"orders","type":null,"data":{"id":1}}`, `"type" must be a string, not a null`, "Maxwell row event", "test.orders"},
		{"no table", `{"database":"test","type":"insert","data":{"id":1}}`, `no "table"`, `"database" and "table"`, ""},
		{"table not a string", `{"database":"test","table":["orders"],"type":"insert","data":{"id":1}}`, `"table" must be a string`, "Maxwell row event", ""},
		{"no data", string(rec("insert", ``)), `insert record has no "data"`, `"data"`, "test.orders"},
		{"data null", string(rec("delete", `,"data":null`)), `delete record has no "data"`, `"data"`, "test.orders"},
		{"data an array", string(rec("insert", `,"data":[{"id":1}]`)), `"data" must be an object or null, not a array`, "Maxwell row event", "test.orders"},
		{"data empty", string(rec("insert", `,"data":{}`)), `"data" has no columns`, "Maxwell row event", "test.orders"},
		{"old a string", string(rec("update", `,"data":{"id":1},"old":"x"`)), `"old" must be an object or null, not a string`, "Maxwell row event", "test.orders"},
		{"duplicate column", string(rec("insert", `,"data":{"id":1,"id":2}`)), `"data": duplicate column "id"`, "Maxwell row event", "test.orders"},
		{"duplicate field", string(rec("insert", `,"data":{"id":1},"data":{"id":2}`)), `field "data" appears twice`, "Maxwell row event", "test.orders"},
		{"xid an object", string(rec("insert", `,"data":{"id":1},"xid":{}`)), `"xid" must be a number`, "Maxwell row event", "test.orders"},
		{"commit a string", string(rec("insert", `,"data":{"id":1},"commit":"true"`)), `"commit" must be a boolean`, "Maxwell row event", "test.orders"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe := decodeErr(t, d, []byte(tc.rec))
			if !strings.Contains(fe.Reason, tc.reason) {
				t.Errorf("Reason = %q, want it to contain %q", fe.Reason, tc.reason)
			}
			if !strings.Contains(fe.Hint, tc.hint) {
				t.Errorf("Hint = %q, want it to contain %q", fe.Hint, tc.hint)
			}
			if fe.Table != tc.table {
				t.Errorf("Table = %q, want %q", fe.Table, tc.table)
			}
		})
	}
}

func TestConcurrentDecode(t *testing.T) {
	d := newDecoder(t, nil)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			table := []string{"a", "b"}[g%2]
			r := []byte(`{"database":"test","table":"` + table + `","type":"insert","data":{"id":1}}`)
			for range 200 {
				cs, err := d.Decode(r, testPos)
				if err != nil || len(cs) != 1 || cs[0].Table.Name != table {
					t.Errorf("goroutine %d: %v, %v", g, cs, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
