package canal

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

// msg builds a message of table shop.orders; rest is JSON members.
func msg(typ, rest string) []byte {
	return []byte(`{"database":"shop","table":"orders","type":"` + typ + `","isDdl":false,"es":1589373515000,"ts":1589373515477,"id":3,"pkNames":["id"]` + rest + `}`)
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
	r1 := changelog.RowOf("id", "1", "name", "a", "note", nil)
	r2 := changelog.RowOf("id", "2", "name", "b", "note", "x")
	const data = `,"data":[{"id":"1","name":"a","note":null},{"id":"2","name":"b","note":"x"}]`
	type img struct{ before, after changelog.Row }
	for _, tc := range []struct {
		name string
		rec  []byte
		kind changelog.Kind
		want []img
	}{
		{"insert", msg("INSERT", data+`,"old":null`), changelog.Insert, []img{{changelog.Row{}, r1}, {changelog.Row{}, r2}}},
		{"update", msg("UPDATE", data+`,"old":[{"note":"was","extra":"e"},{"note":null,"name":"c"}]`), changelog.UpdateAfter, []img{
			{changelog.RowOf("id", "1", "name", "a", "note", "was", "extra", "e"), r1},
			{changelog.RowOf("id", "2", "name", "c", "note", nil), r2},
		}},
		{"update with empty old", msg("UPDATE", data+`,"old":[{},null]`), changelog.UpdateAfter, []img{{r1, r1}, {r2, r2}}},
		{"key change", msg("UPDATE", `,"data":[{"id":"2"}],"old":[{"id":"1"}]`), changelog.UpdateAfter, []img{
			{changelog.RowOf("id", "1"), changelog.RowOf("id", "2")},
		}},
		{"delete", msg("DELETE", data), changelog.Delete, []img{{r1, changelog.Row{}}, {r2, changelog.Row{}}}},
		{"non-string values", msg("INSERT", `,"data":[{"id":1,"ok":true,"doc":{"a":[1]}}]`), changelog.Insert, []img{
			{changelog.Row{}, changelog.RowOf("id", changelog.Number("1"), "ok", true, "doc", changelog.JSON(`{"a":[1]}`))},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := d.Decode(tc.rec, testPos)
			if err != nil {
				t.Fatal(err)
			}
			if len(cs) != len(tc.want) {
				t.Fatalf("%d changes, want %d", len(cs), len(tc.want))
			}
			for i, c := range cs {
				if c.Kind != tc.kind || c.Table != (changelog.Table{Namespace: "shop", Name: "orders"}) || c.Pos != testPos || int(c.Size) != len(tc.rec)/len(cs) {
					t.Errorf("change %d: kind, table, pos, size = %v, %v, %v, %d", i, c.Kind, c.Table, c.Pos, c.Size)
				}
				if c.TxnID != "" || c.TxnEnd {
					t.Errorf("change %d: TxnID %q, TxnEnd %v; Canal carries no transaction", i, c.TxnID, c.TxnEnd)
				}
				if !reflect.DeepEqual(c.Before, tc.want[i].before) {
					t.Errorf("change %d: Before = %#v, want %#v", i, c.Before, tc.want[i].before)
				}
				if !reflect.DeepEqual(c.After, tc.want[i].after) {
					t.Errorf("change %d: After = %#v, want %#v", i, c.After, tc.want[i].after)
				}
			}
		})
	}
}

// TestDecodeUpdateImagesIndependent: the before image is a copy, so
// changing it leaves the after image alone.
func TestDecodeUpdateImagesIndependent(t *testing.T) {
	cs, err := newDecoder(t, nil).Decode(msg("UPDATE", `,"data":[{"id":"1","a":"new"}],"old":[{"a":"old"}]`), testPos)
	if err != nil || len(cs) != 1 {
		t.Fatal(cs, err)
	}
	cs[0].Before.Values[0] = "changed"
	if v, _ := cs[0].After.Get("id"); v != "1" {
		t.Errorf("After id = %v after changing Before", v)
	}
}

func TestDecodeNoChange(t *testing.T) {
	d := newDecoder(t, nil)
	for _, r := range []string{
		"", " \n", "null",
		`{"data":[{"id":"1"}],"database":"mydb","isDdl":false,"table":"t","type":"INIT"}`,
		`{"data":null,"database":"mydb","isDdl":false,"sql":"FLUSH TABLES","table":"","type":"QUERY"}`,
		string(msg("INSERT", `,"data":[]`)),
	} {
		cs, err := d.Decode([]byte(r), testPos)
		if err != nil || cs != nil {
			t.Errorf("Decode(%q) = %v, %v; want no change, no error", r, cs, err)
		}
	}
	if got := d.Skipped(); got != 3 {
		t.Errorf("Skipped() = %d, want 3 (tombstones are not counted)", got)
	}
}

// TestDecodeDDL decodes DDL messages (testdata/ddl.jsonl, shaped as Canal
// writes them): each is one row-less SchemaChange change naming its table,
// or its database alone, which the engine skips and counts; never an error,
// never a row.
func TestDecodeDDL(t *testing.T) {
	d := newDecoder(t, nil)
	want := []changelog.Table{
		{Namespace: "mydb", Name: "orders"},    // CREATE
		{Namespace: "mydb", Name: "products"},  // ALTER
		{Namespace: "mydb", Name: "products"},  // CINDEX
		{Namespace: "mydb", Name: "old_stuff"}, // ERASE
		{Namespace: "mydb", Name: "t"},         // an unknown type with isDdl
		{Namespace: "mydb"},                    // QUERY with isDdl, no table
	}
	decodetest.SchemaChanges(t, d, filepath.Join("testdata", "ddl.jsonl"), want)
	if d.Skipped() != 0 {
		t.Errorf("Skipped() = %d: a DDL message is a change, not a record decoded to none", d.Skipped())
	}
}

func TestDecodeDoesNotRetainInput(t *testing.T) {
	r := msg("UPDATE", `,"data":[{"id":"1","name":"abc"}],"old":[{"name":"xyz"}]`)
	cs, err := newDecoder(t, nil).Decode(r, testPos)
	if err != nil {
		t.Fatal(err)
	}
	for i := range r {
		r[i] = 'X'
	}
	if v, _ := cs[0].After.Get("name"); v != "abc" {
		t.Errorf("After name = %v after overwriting the input", v)
	}
	if v, _ := cs[0].Before.Get("name"); v != "xyz" || cs[0].Table.Name != "orders" {
		t.Errorf("Before name = %v, table %v after overwriting the input", v, cs[0].Table)
	}
}

func TestNewOptions(t *testing.T) {
	if _, err := New(format.Options{"canal.x": "1"}); err == nil || !strings.Contains(err.Error(), `"canal.x"`) {
		t.Errorf("New with an unknown option: %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	d := newDecoder(t, nil)
	const row = `,"data":[{"id":"1"}]`
	for _, tc := range []struct {
		name, rec           string
		reason, hint, table string
	}{
		{"truncated JSON", `{"database":"shop","table":"orders","type":"INSERT","data":[{"id":"1"}`, "invalid JSON", "Canal flat message in JSON", "shop.orders"},
		{"truncated array", `{"database":"shop","table":"orders","type":"INSERT","data":[{"id":"1"}`, "invalid JSON", "flatMessage", "shop.orders"},
		{"bad array separator", `{"database":"shop","table":"orders","type":"INSERT","data":[{"id":"1"}:{"id":"2"}]}`, "invalid JSON", "JSON", "shop.orders"},
		{"trailing data", string(msg("INSERT", row)) + `{}`, "invalid JSON", "JSON", "shop.orders"},
		{"bad escape before table", `{"type":"INS\xERT","database":"shop","table":"orders"}`, "invalid JSON", "JSON", ""},
		{"not an object", `[{"type":"INSERT"}]`, "record is a JSON array", "JSON", ""},
		{"no type", `{"database":"shop","table":"orders","data":[{"id":"1"}]}`, `no "type" field`, "Canal", "shop.orders"},
		{"unknown type", string(msg("UPSERT", row)), `unknown type "UPSERT"`, `"INSERT"`, "shop.orders"},
		{"lower-case type", string(msg("insert", row)), `unknown type "insert"`, `"INSERT"`, "shop.orders"},
		{"truncate", string(msg("TRUNCATE", `,"data":null`)), "truncate", "does not apply TRUNCATE", "shop.orders"},
		{"truncate as DDL", `{"data":null,"database":"shop","isDdl":true,"sql":"TRUNCATE orders","table":"orders","type":"TRUNCATE"}`, "truncate", "TRUNCATE", "shop.orders"},
		{"row type marked DDL", `{"data":[{"id":"1"}],"database":"shop","isDdl":true,"table":"orders","type":"INSERT"}`, `"isDdl": true`, "Canal flat message", "shop.orders"},
		{"type not a string", `{"database":"shop","table":"orders","type":1}`, `"type" must be a string`, "Canal flat message", "shop.orders"},
		{"isDdl a string", `{"database":"shop","table":"orders","type":"INSERT","isDdl":"false"}`, `"isDdl" must be a boolean`, "Canal flat message", "shop.orders"},
		{"no table", `{"database":"shop","type":"INSERT","data":[{"id":"1"}]}`, `no "table"`, `"database" and "table"`, ""},
		{"table not a string", `{"database":"shop","table":7,"type":"INSERT","data":[{"id":"1"}]}`, `"table" must be a string`, "Canal flat message", ""},
		{"no data", string(msg("INSERT", `,"data":null`)), `INSERT message has no "data"`, `"data"`, "shop.orders"},
		{"data an object", string(msg("INSERT", `,"data":{"id":"1"}`)), `"data" must be an array or null, not a object`, "Canal flat message", "shop.orders"},
		{"data element a string", string(msg("DELETE", `,"data":[{"id":"1"},"2"]`)), `"data"[1] must be an object, not a string`, "Canal flat message", "shop.orders"},
		{"data element null", string(msg("DELETE", `,"data":[null]`)), `"data"[0] must be an object, not a null`, "Canal flat message", "shop.orders"},
		{"data element empty", string(msg("INSERT", `,"data":[{}]`)), `"data"[0] has no columns`, "Canal flat message", "shop.orders"},
		{"duplicate column", string(msg("INSERT", `,"data":[{"id":"1","id":"2"}]`)), `"data"[0]: duplicate column "id"`, "Canal flat message", "shop.orders"},
		{"duplicate field", string(msg("INSERT", row+row)), `field "data" appears twice`, "Canal flat message", "shop.orders"},
		{"update without old", string(msg("UPDATE", row+`,"old":null`)), `UPDATE message has no "old"`, "key", "shop.orders"},
		{"update old too short", string(msg("UPDATE", `,"data":[{"id":"1"},{"id":"2"}],"old":[{"id":"0"}]`)), `2 rows in "data" but 1 in "old"`, "key", "shop.orders"},
		{"old an object", string(msg("UPDATE", row+`,"old":{"id":"0"}`)), `"old" must be an array or null`, "Canal flat message", "shop.orders"},
		{"old element a number", string(msg("UPDATE", row+`,"old":[5]`)), `"old"[0] must be an object, not a number`, "Canal flat message", "shop.orders"},
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
			r := []byte(`{"database":"shop","table":"` + table + `","type":"INSERT","data":[{"id":"1"},{"id":"2"}]}`)
			for range 200 {
				cs, err := d.Decode(r, testPos)
				if err != nil || len(cs) != 2 || cs[1].Table.Name != table {
					t.Errorf("goroutine %d: %v, %v", g, cs, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
