package debezium

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/txsink/txsink/changelog"
)

// narrowed returns a decoder told that the updates of inventory.orders
// (testSource's table) are read for their key column id alone, as the
// engine tells it once it knows the table's key.
func narrowed(t testing.TB) *Decoder {
	t.Helper()
	d := newDecoder(t, nil)
	d.NarrowBefore(changelog.Table{Namespace: "inventory", Name: "orders"}, []string{"id"})
	return d
}

// TestNarrowBefore: an update of a table the decoder was told of carries
// in Before only the key column (an update of another table, or one whose
// image lacks the key, its whole before image); a delete's Before is
// whole, whatever the decoder was told; the after image is whole.
func TestNarrowBefore(t *testing.T) {
	full := `{"id":7,"status":"NEW","note":"x"}`
	after := `{"id":7,"status":"PAID","note":"x"}`
	other := []byte(strings.Replace(string(bare("u", full, after)), `"table":"orders"`, `"table":"customers"`, 1))
	for _, tc := range []struct {
		name   string
		rec    []byte
		before changelog.Row
	}{
		{"update", bare("u", full, after), changelog.RowOf("id", changelog.Number("7"))},
		{"update moving the key", bare("u", full, `{"id":8,"status":"PAID","note":"x"}`), changelog.RowOf("id", changelog.Number("7"))},
		{"key not first", bare("u", `{"status":"NEW","id":7}`, after), changelog.RowOf("id", changelog.Number("7"))},
		{"update with white space", bare("u", `{ "status" : "NEW" , "id" : 7 }`, after), changelog.RowOf("id", changelog.Number("7"))},
		{"update of a table not told", other, changelog.RowOf("id", changelog.Number("7"), "status", "NEW", "note", "x")},
		{"before without the key", bare("u", `{"status":"NEW"}`, after), changelog.RowOf("status", "NEW")},
		{"delete", bare("d", full, "null"), changelog.RowOf("id", changelog.Number("7"), "status", "NEW", "note", "x")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := decodeOne(t, narrowed(t), tc.rec)
			if !reflect.DeepEqual(c.Before, tc.before) {
				t.Errorf("Before = %v, want %v", c.Before, tc.before)
			}
			if c.Kind == changelog.UpdateAfter && c.After.Len() != 3 {
				t.Errorf("After = %v, want the whole image", c.After)
			}
		})
	}
}

// TestNarrowBeforeSpelling: a key column the records spell in another
// case than the engine named it is read whole the first time, and for
// itself from then on.
func TestNarrowBeforeSpelling(t *testing.T) {
	d := narrowed(t)
	rec := bare("u", `{"ID":7,"status":"NEW"}`, `{"ID":7,"status":"PAID"}`)
	if c := decodeOne(t, d, rec); c.Before.Len() != 2 {
		t.Errorf("first Before = %v, want the whole image", c.Before)
	}
	if c := decodeOne(t, d, rec); !reflect.DeepEqual(c.Before, changelog.RowOf("ID", changelog.Number("7"))) {
		t.Errorf("second Before = %v, want ID alone", c.Before)
	}
}

// TestNarrowBeforeBadInput is the rule for the columns of an update's
// before image that decide nothing (README, "Values"), each side of it:
// they are checked as JSON and as text, by the told decoder as by any
// other; a column named twice or a value that does not match the Connect
// schema is refused in the key columns and in a whole image only.
func TestNarrowBeforeBadInput(t *testing.T) {
	after := `{"id":7,"status":"PAID","price":"AA=="}`
	decimal := []field{{name: "id", typ: "int64"}, {name: "status", typ: "string"},
		{name: "price", typ: "bytes", logical: logicalDecimal, params: `{"scale":"2"}`}}
	decimalKey := []field{{name: "id", typ: "bytes", logical: logicalDecimal, params: `{"scale":"2"}`}, {name: "status", typ: "string"}}
	for _, tc := range []struct {
		name string
		rec  []byte
		// reason is the refusal of a decoder not told of the table (and
		// of a delete's image), want the told decoder's ("" for none).
		reason, want string
	}{
		{"bad text in another column", bare("u", "{\"id\":7,\"status\":\"N\xffW\"}", after), `"before" image column "status"`, `"before" image column "status"`},
		{"bad text in another column's object", bare("u", "{\"id\":7,\"doc\":{\"a\":\"\xff\"},\"status\":\"NEW\"}", after), `"before" image column "doc"`, `"before" image column "doc"`},
		{"bad text after a literal", bare("u", "{\"id\":7,\"flag\":true,\"status\":\"N\xffW\"}", after), `"before" image column "status"`, `"before" image column "status"`},
		{"bad escape in another column", bare("u", `{"id":7,"status":"N\ud800"}`, after), `column "status"`, `column "status"`},
		{"malformed JSON in another column", bare("u", `{"id":7,"status":NEW}`, after), "invalid JSON", "invalid JSON"},
		{"empty before", bare("u", `{}`, after), `"before" image has no columns`, `"before" image has no columns`},
		{"key named twice", bare("u", `{"id":7,"id":8}`, after), `duplicate column "id"`, `duplicate column "id"`},
		{"another column named twice", bare("u", `{"id":7,"status":"NEW","status":"OLD"}`, after), `duplicate column "status"`, ""},
		{"another column's value not the schema's", connect(decimal, "u", `{"id":7,"status":"NEW","price":"not base64"}`, after), `column "price"`, ""},
		{"key's value not the schema's", connect(decimalKey, "u", `{"id":"not base64","status":"NEW"}`, `{"id":"AA==","status":"NEW"}`), `column "id"`, `column "id"`},
		{"a delete's column named twice", bare("d", `{"id":7,"status":"NEW","status":"OLD"}`, "null"), `duplicate column "status"`, `duplicate column "status"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, told := range []bool{false, true} {
				d, want := newDecoder(t, nil), tc.reason
				if told {
					d, want = narrowed(t), tc.want
				}
				if want == "" {
					cs, err := d.Decode(tc.rec, testPos)
					if err != nil || len(cs) != 1 {
						t.Errorf("told %v: Decode = %v, %v; want one change", told, cs, err)
					}
					continue
				}
				if fe := decodeErr(t, d, tc.rec); !strings.Contains(fe.Error(), want) {
					t.Errorf("told %v: error %q, want it to hold %q", told, fe.Error(), want)
				}
			}
		})
	}
}

// TestNarrowBeforeConcurrent: decoders read the narrowing while the
// engine names tables (and a spelling is learnt); every update's Before
// is its key alone or its whole image, never anything between.
func TestNarrowBeforeConcurrent(t *testing.T) {
	d := narrowed(t)
	recs := [][]byte{
		bare("u", `{"id":7,"status":"NEW"}`, `{"id":7,"status":"PAID"}`),
		bare("u", `{"ID":7,"status":"NEW"}`, `{"ID":7,"status":"PAID"}`),
	}
	var wg sync.WaitGroup
	errs := make(chan error, 9)
	wg.Go(func() {
		for i := range 200 {
			d.NarrowBefore(changelog.Table{Namespace: "inventory", Name: fmt.Sprint("t", i%7)}, []string{"k", "id"})
		}
	})
	for g := range 8 {
		wg.Go(func() {
			for i := range 300 {
				cs, err := d.Decode(recs[(g+i)%2], testPos)
				if err != nil || len(cs) != 1 || (cs[0].Before.Len() != 1 && cs[0].Before.Len() != 2) {
					errs <- fmt.Errorf("%v, %v", cs, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// FuzzNarrowBefore: a decoder told the key of a table refuses only what
// one not told refuses, and gives the same changes but for an update's
// Before, which holds the told key with the same values (or is whole). It
// may accept an update the other refuses, for a column named twice or a
// value against the Connect schema outside the key (the rule
// TestNarrowBeforeBadInput shows).
func FuzzNarrowBefore(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	for _, before := range []string{`{"id":7,"status":"NEW","status":"x"}`, `{"status":"NEW","id":7}`, `{"ID":7,"id":8}`, `{}`, `{ "id" : 7 }`, `{"\u0069d":7,"s":[1,{"a":true}]}`} {
		f.Add(bare("u", before, `{"id":7,"status":"PAID"}`))
		f.Add(bare("d", before, "null"))
	}
	whole, told := newDecoder(f, nil), newDecoder(f, nil)
	for _, t := range []changelog.Table{{Namespace: "inventory", Name: "orders"}, {Namespace: "inventory", Name: "accounts"}} {
		told.NarrowBefore(t, []string{"id"})
	}
	pos := changelog.Position{Partition: "fuzz", Offset: 7, Seq: 3}
	f.Fuzz(func(t *testing.T, data []byte) {
		cw, errW := whole.Decode(data, pos)
		cn, errN := told.Decode(data, pos)
		switch {
		case errN != nil && errW == nil:
			t.Fatalf("told decoder refuses what the other takes: %v", errN)
		case errN == nil && errW != nil:
			if len(cn) != 1 || cn[0].Kind != changelog.UpdateAfter {
				t.Fatalf("told decoder takes %v, which the other refuses (%v), and it is not an update", cn, errW)
			}
			return
		case errN != nil:
			return
		}
		if len(cw) != len(cn) {
			t.Fatalf("%d changes, want %d", len(cn), len(cw))
		}
		for i := range cw {
			w, n := cw[i], cn[i]
			if n.Kind == changelog.UpdateAfter && !w.Before.IsZero() {
				if _, ok := w.Before.Get("id"); ok {
					if _, ok := n.Before.Get("id"); !ok {
						t.Fatalf("Before %v lacks the key of %v", n.Before, w.Before)
					}
				}
				for j, name := range n.Before.Names {
					if v, ok := w.Before.Get(name); !ok || !reflect.DeepEqual(v, n.Before.Values[j]) {
						t.Fatalf("Before %v is not part of %v", n.Before, w.Before)
					}
				}
				n.Before = w.Before
			}
			if !reflect.DeepEqual(w, n) {
				t.Fatalf("change\n%#v\nwant\n%#v", n, w)
			}
		}
	})
}
