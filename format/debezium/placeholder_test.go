package debezium

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
)

// The default placeholder's forms, as Debezium's PostgreSQL connector
// writes them through JsonConverter.
const (
	ph       = DefaultUnavailableValuePlaceholder
	phBase64 = "X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ=="
	phInts   = "[95,95,100,101,98,101,122,105,117,109,95,117,110,97,118,97,105,108,97,98,108,101,95,118,97,108,117,101]"
)

// TestUnavailableValuePlaceholder: a column whose value is the
// unavailable-value placeholder, in any of its forms, is dropped from the
// image, with and without the Connect schema, in "after" and "before";
// every other column, and any value that only resembles a form, stays.
func TestUnavailableValuePlaceholder(t *testing.T) {
	if got := base64.StdEncoding.EncodeToString([]byte(ph)); got != phBase64 {
		t.Fatalf("base64 of the placeholder = %s, the test says %s", got, phBase64)
	}
	phFloats := strings.ReplaceAll(strings.ReplaceAll(phInts, ",", ".0,"), "]", ".0]")
	phUUID := nameUUID([]byte(ph))
	// Every case's row is {"id":1,"title":"t","doc":<doc>} and its schema
	// gives doc the Connect type typ (items of an array: itemsTyp).
	tests := []struct {
		name, doc, typ string
		dropped        bool
	}{
		{"text", strconv.Quote(ph), "string", true},
		{"text in a bytes column", strconv.Quote(ph), "bytes", true},
		{"bytes as base64", strconv.Quote(phBase64), "bytes", true},
		{"base64 text in a string column", strconv.Quote(phBase64), "string", false},
		{"text array", `["` + ph + `"]`, "array", true},
		{"text array, spaced", "[ \"" + ph + "\" ]\n", "array", true},
		{"bytea array", `["` + phBase64 + `"]`, "array", true},
		{"uuid array", `["` + phUUID + `"]`, "array", true},
		{"int array", phInts, "array", true},
		{"float array", phFloats, "array", true},
		{"hstore as a map", `{"` + ph + `":"` + ph + `"}`, "map", true},
		{"hstore as JSON text", strconv.Quote(`{"` + ph + `":"` + ph + `"}`), "string", true},
		{"escaped text", `"\u005f_debezium_unavailable_value"`, "string", true},

		{"text with a space", strconv.Quote(ph + " "), "string", false},
		{"text in other case", strconv.Quote(strings.ToUpper(ph)), "string", false},
		{"array with another element", `["` + ph + `","x"]`, "array", false},
		{"array of the placeholder twice", `["` + ph + `","` + ph + `"]`, "array", false},
		{"part of the int array", "[95,95,100]", "array", false},
		{"array in a string", strconv.Quote(`["` + ph + `"]`), "string", false},
		{"null", "null", "string", false},
		{"number", "95", "int32", false},
	}
	d := newDecoder(t, nil)
	for _, tc := range tests {
		for _, schema := range []bool{false, true} {
			name := tc.name
			if schema {
				name += ", with schema"
			}
			t.Run(name, func(t *testing.T) {
				after := `{"id":1,"title":"t","doc":` + tc.doc + `}`
				before := `{"id":1,"doc":` + tc.doc + `}`
				rec := bare("u", before, after)
				if schema {
					rec = connect([]field{{name: "id", typ: "int32"}, {name: "title", typ: "string"}, {name: "doc", typ: tc.typ}}, "u", before, after)
				}
				c := decodeOne(t, d, rec)
				dropped := tc.dropped
				if !schema && tc.name == "base64 text in a string column" {
					dropped = true // no schema says it is text: base64 is what a bytea column sends
				}
				wantAfter, wantBefore := []string{"id", "title", "doc"}, []string{"id", "doc"}
				if dropped {
					wantAfter, wantBefore = []string{"id", "title"}, []string{"id"}
				}
				if !reflect.DeepEqual(c.After.Names, wantAfter) || len(c.After.Values) != len(wantAfter) {
					t.Errorf("After = %v %v, want columns %v", c.After.Names, c.After.Values, wantAfter)
				}
				if !reflect.DeepEqual(c.Before.Names, wantBefore) || len(c.Before.Values) != len(wantBefore) {
					t.Errorf("Before = %v %v, want columns %v", c.Before.Names, c.Before.Values, wantBefore)
				}
				if v, _ := c.After.Get("title"); v != "t" {
					t.Errorf("title = %#v", v)
				}
			})
		}
	}
}

// TestUnavailableValuePlaceholderImages: dropping a column gives the row
// names of its own (the decoder shares one list between rows naming the
// same columns), keeps the schema's conversions of the other columns,
// and leaves a delete's key; a row of placeholders keeps its key alone.
func TestUnavailableValuePlaceholderImages(t *testing.T) {
	d := newDecoder(t, nil)
	full := decodeOne(t, d, bare("c", "null", `{"id":1,"a":"x","b":"y"}`))
	part := decodeOne(t, d, bare("c", "null", `{"id":2,"a":"`+ph+`","b":"y"}`))
	again := decodeOne(t, d, bare("c", "null", `{"id":3,"a":"x","b":"y"}`))
	if !reflect.DeepEqual(part.After.Names, []string{"id", "b"}) || !reflect.DeepEqual(part.After.Values, []changelog.Value{changelog.Number("2"), "y"}) {
		t.Errorf("partial row: %v %v", part.After.Names, part.After.Values)
	}
	for _, c := range []changelog.Change{full, again} {
		if !reflect.DeepEqual(c.After.Names, []string{"id", "a", "b"}) {
			t.Errorf("a full row's names became %v", c.After.Names)
		}
	}
	if cap(part.After.Names) != len(part.After.Names) {
		t.Errorf("the partial row's names have room to append into")
	}

	fields := []field{{name: "id", typ: "int32"}, {name: "doc", typ: "bytes"},
		{name: "price", typ: "bytes", logical: logicalDecimal, params: `{"scale":"2"}`}, {name: "raw", typ: "bytes"}}
	c := decodeOne(t, d, connect(fields, "c", "null", `{"id":1,"doc":"`+phBase64+`","price":"MDk=","raw":"AQID"}`))
	want := changelog.Row{Names: []string{"id", "price", "raw"}, Values: []changelog.Value{changelog.Number("1"), changelog.Number("123.45"), []byte{1, 2, 3}}}
	if !reflect.DeepEqual(c.After, want) {
		t.Errorf("After = %#v, want %#v", c.After, want)
	}

	del := decodeOne(t, d, bare("d", `{"id":7,"doc":"`+ph+`"}`, "null"))
	if !reflect.DeepEqual(del.Before.Names, []string{"id"}) || del.Kind != changelog.Delete {
		t.Errorf("delete: %v %v", del.Kind, del.Before.Names)
	}
}

// TestUnavailableValuePlaceholderOption: the option sets the placeholder
// (as text, or as bytes with "hex:"), "" turns the detection off, and a
// bad hex value is refused when the decoder is made.
func TestUnavailableValuePlaceholderOption(t *testing.T) {
	rec := func(doc, raw string) []byte {
		return connect([]field{{name: "id", typ: "int32"}, {name: "doc", typ: "string"}, {name: "raw", typ: "bytes"}},
			"c", "null", `{"id":1,"doc":`+jsonText(t, doc)+`,"raw":`+jsonText(t, raw)+`}`)
	}
	tests := []struct {
		option, doc, raw string
		want             []string
	}{
		{"__toasted__", "__toasted__", base64.StdEncoding.EncodeToString([]byte("__toasted__")), []string{"id"}},
		{"__toasted__", ph, phBase64, []string{"id", "doc", "raw"}},
		{"hex:0001ff", "\x00\x01\uFFFD", base64.StdEncoding.EncodeToString([]byte{0, 1, 0xff}), []string{"id"}},
		{"", ph, phBase64, []string{"id", "doc", "raw"}},
	}
	for _, tc := range tests {
		d := newDecoder(t, format.Options{OptionUnavailableValuePlaceholder: tc.option})
		c := decodeOne(t, d, rec(tc.doc, tc.raw))
		if !reflect.DeepEqual(c.After.Names, tc.want) {
			t.Errorf("option %q: After has %v, want %v", tc.option, c.After.Names, tc.want)
		}
	}
	if ints := newDecoder(t, format.Options{OptionUnavailableValuePlaceholder: "hex:80ff"}).unavailable.json[3]; ints != "[-128,-1]" {
		t.Errorf("hex:80ff as Java's signed bytes: %s, want [-128,-1]", ints)
	}
	for _, bad := range []string{"hex:", "hex:zz", "hex:123"} {
		if _, err := New(format.Options{OptionUnavailableValuePlaceholder: bad}); err == nil || !strings.Contains(err.Error(), OptionUnavailableValuePlaceholder) {
			t.Errorf("option %q: err = %v, want a refusal naming the option", bad, err)
		}
	}
}

// jsonText is s as a JSON string, the way encoding/json writes it.
func jsonText(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNameUUID holds nameUUID to Java's UUID.nameUUIDFromBytes: version 3,
// the IETF variant, MD5 of the bytes (RFC 4122's example name under no
// namespace).
func TestNameUUID(t *testing.T) {
	got := nameUUID([]byte("www.example.com"))
	if len(got) != 36 || got[14] != '3' || !strings.ContainsRune("89ab", rune(got[19])) {
		t.Errorf("nameUUID = %s, want a version 3 UUID of the IETF variant", got)
	}
	// md5("www.example.com") is 7c1767b30512b6003fd3c2e618a86522 (coreutils'
	// md5sum); byte 6 takes version 3, byte 8 the variant bits.
	if want := "7c1767b3-0512-3600-bfd3-c2e618a86522"; got != want {
		t.Errorf("nameUUID = %s, want %s", got, want)
	}
}
