package ogg

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
)

var testPos = changelog.Position{Partition: "p0.jsonl", Offset: 4096, Seq: 10}

// rec builds a record of table SHOP.ORDERS; before and after are JSON texts
// ("" leaves the field out).
func rec(op, before, after string) []byte {
	r := `{"table":"SHOP.ORDERS","pos":"00000000000000000000143","primary_keys":["id"]`
	if before != "" {
		r += `,"before":` + before
	}
	if after != "" {
		r += `,"after":` + after
	}
	return []byte(r + `,"op_type":"` + op + `","op_ts":"2020-05-13 15:40:06.000000"}`)
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

func TestDecodeOps(t *testing.T) {
	d := newDecoder(t, nil)
	b := changelog.RowOf("id", changelog.Number("1"), "name", "a", "n", nil)
	a := changelog.RowOf("id", changelog.Number("1"), "name", "b", "doc", changelog.JSON(`[1,{"x":true}]`), "ok", false)
	const bj, aj = `{"id":1,"name":"a","n":null}`, `{"id":1,"name":"b","doc":[1,{"x":true}],"ok":false}`
	for _, tc := range []struct {
		name          string
		rec           []byte
		kind          changelog.Kind
		before, after changelog.Row
	}{
		{"insert", rec("I", "", aj), changelog.Insert, changelog.Row{}, a},
		{"insert with null before", rec("I", "null", aj), changelog.Insert, changelog.Row{}, a},
		{"update", rec("U", bj, aj), changelog.UpdateAfter, b, a},
		{"delete", rec("D", bj, "null"), changelog.Delete, b, changelog.Row{}},
		{"extra fields", []byte(`{"table":"SHOP.ORDERS","source":{"db":"x","table":"y","op_type":"D"},"after":` + aj + `,"op_type":"I", "current_ts":"2020-05-13T13:39:35.766000","tokens":{"k":"v"}}`),
			changelog.Insert, changelog.Row{}, a},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := decodeOne(t, d, tc.rec)
			if c.Kind != tc.kind || c.Table != (changelog.Table{Namespace: "SHOP", Name: "ORDERS"}) || c.TxnID != "" {
				t.Errorf("kind, table, txn = %v, %#v, %q; want %v, SHOP.ORDERS, none", c.Kind, c.Table, c.TxnID, tc.kind)
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

func TestDecodeTable(t *testing.T) {
	d := newDecoder(t, nil)
	for _, tc := range []struct {
		table string
		want  changelog.Table
	}{
		{"OGG.TBL_TEST", changelog.Table{Namespace: "OGG", Name: "TBL_TEST"}},
		{"TBL", changelog.Table{Name: "TBL"}},
		{"CDB.PDB.TBL", changelog.Table{Namespace: "CDB", Name: "PDB.TBL"}},
		{`S\u002eT`, changelog.Table{Namespace: "S", Name: "T"}},
		{"OGG.TBL_TEST", changelog.Table{Namespace: "OGG", Name: "TBL_TEST"}}, // from the cache
	} {
		c := decodeOne(t, d, []byte(`{"table":"`+tc.table+`","op_type":"I","after":{"id":1}}`))
		if c.Table != tc.want {
			t.Errorf("table %q: got %#v, want %#v", tc.table, c.Table, tc.want)
		}
	}
}

func TestDecodeNoChange(t *testing.T) {
	d := newDecoder(t, nil)
	for _, r := range []string{"", " \n", "null"} {
		cs, err := d.Decode([]byte(r), testPos)
		if err != nil || cs != nil {
			t.Errorf("Decode(%q) = %v, %v; want no change, no error", r, cs, err)
		}
	}
}

func TestDecodeDoesNotRetainInput(t *testing.T) {
	r := rec("U", `{"id":1,"name":"xyz"}`, `{"id":1,"name":"abc"}`)
	c := decodeOne(t, newDecoder(t, nil), r)
	for i := range r {
		r[i] = 'X'
	}
	if v, _ := c.After.Get("name"); v != "abc" {
		t.Errorf("After name = %v after overwriting the input", v)
	}
	if v, _ := c.Before.Get("name"); v != "xyz" || c.Table.Name != "ORDERS" {
		t.Errorf("Before name = %v, table %v after overwriting the input", v, c.Table)
	}
}

func TestAllowMissingBefore(t *testing.T) {
	r := rec("U", "null", `{"id":1}`)
	fe := decodeErr(t, newDecoder(t, nil), r)
	if !strings.Contains(fe.Hint, OptionAllowMissingBefore) || !strings.Contains(fe.Hint, "GETUPDATEBEFORES") {
		t.Errorf("hint %q does not name the option and GETUPDATEBEFORES", fe.Hint)
	}
	c := decodeOne(t, newDecoder(t, format.Options{OptionAllowMissingBefore: "true"}), r)
	if c.Kind != changelog.UpdateAfter || !c.Before.IsZero() {
		t.Errorf("with the option: %v with Before %v, want a plain +U", c.Kind, c.Before)
	}
}

func TestNewOptions(t *testing.T) {
	for _, tc := range []struct {
		opts format.Options
		err  string
	}{
		{format.Options{"ogg.x": "1"}, `"ogg.x"`},
		{format.Options{OptionAllowMissingBefore: "maybe"}, OptionAllowMissingBefore},
	} {
		if _, err := New(tc.opts); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("New(%v) = %v, want an error naming %s", tc.opts, err, tc.err)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	d := newDecoder(t, nil)
	const row = `{"id":1}`
	for _, tc := range []struct {
		name, rec           string
		reason, hint, table string
	}{
		{"truncated JSON", `{"table":"SHOP.ORDERS","op_type":"I","after":{"id":1`, "invalid JSON", "GoldenGate operation in JSON", "SHOP.ORDERS"},
		{"trailing data", string(rec("I", "", row)) + `x`, "invalid JSON", "JSON", "SHOP.ORDERS"},
		{"bad escape before table", `{"op_type":"\q","table":"SHOP.ORDERS"}`, "invalid JSON", "JSON", ""},
		{"not an object", `"I"`, "record is a JSON string", "JSON", ""},
		{"no op_type", `{"table":"SHOP.ORDERS","after":{"id":1}}`, `no "op_type" field`, "JSON formatter", "SHOP.ORDERS"},
		{"unknown op_type", string(rec("X", "", row)), `unknown op_type "X"`, `"I" (insert)`, "SHOP.ORDERS"},
		{"op_type not a string", `{"table":"SHOP.ORDERS","op_type":1,"after":{"id":1}}`, `"op_type" must be a string`, "GoldenGate JSON operation", "SHOP.ORDERS"},
		{"truncate", string(rec("T", "", "")), "truncate", "GETTRUNCATES", "SHOP.ORDERS"},
		{"no table", `{"op_type":"I","after":{"id":1}}`, `no "table"`, `"SCHEMA.TABLE"`, ""},
		{"table without a name", `{"table":"SHOP.","op_type":"I","after":{"id":1}}`, `no "table"`, `"SCHEMA.TABLE"`, ""},
		{"table not a string", `{"table":{"name":"T"},"op_type":"I","after":{"id":1}}`, `"table" must be a string`, "GoldenGate JSON operation", ""},
		{"insert without after", string(rec("I", row, "")), `insert record has no "after" image`, `"after"`, "SHOP.ORDERS"},
		{"update without after", string(rec("U", row, "null")), `update record has no "after" image`, `"after"`, "SHOP.ORDERS"},
		{"update without before", string(rec("U", "", row)), `update record has no "before" image`, "GETUPDATEBEFORES", "SHOP.ORDERS"},
		{"delete without before", string(rec("D", "", "null")), `delete record has no "before" image`, "before images", "SHOP.ORDERS"},
		{"after an array", string(rec("I", "", `[{"id":1}]`)), `"after" must be an object or null, not a array`, "GoldenGate JSON operation", "SHOP.ORDERS"},
		{"before a string", string(rec("D", `"1"`, "")), `"before" must be an object or null, not a string`, "GoldenGate JSON operation", "SHOP.ORDERS"},
		{"after empty", string(rec("I", "", `{}`)), `"after" image has no columns`, "GoldenGate JSON operation", "SHOP.ORDERS"},
		{"duplicate column", string(rec("I", "", `{"id":1,"id":2}`)), `"after" image: duplicate column "id"`, "GoldenGate JSON operation", "SHOP.ORDERS"},
		{"duplicate field", `{"table":"SHOP.ORDERS","op_type":"I","op_type":"D","after":{"id":1}}`, `field "op_type" appears twice`, "GoldenGate JSON operation", "SHOP.ORDERS"},
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
			table := []string{"A", "B"}[g%2]
			r := []byte(`{"table":"S.` + table + `","op_type":"I","after":{"id":1}}`)
			for range 200 {
				cs, err := d.Decode(r, testPos)
				if err != nil || len(cs) != 1 || cs[0].Table != (changelog.Table{Namespace: "S", Name: table}) {
					t.Errorf("goroutine %d: %v, %v", g, cs, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
