package native

import (
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/schema/coltype"
)

// TestTypesRoundTrip writes a line with AppendTyped and reads the
// declared table back: columns in order, types parsed in the dialect's
// spelling, the key NOT NULL, not_null applied; lines of one text share
// one parsed table.
func TestTypesRoundTrip(t *testing.T) {
	types, err := AppendTypes(nil, &Types{Dialect: DialectPostgres,
		Columns: []TypedColumn{{"id", "bigint"}, {"total", "numeric(10,2)"}, {"note", "text"}, {"at", "timestamp(3) with time zone"}},
		Key:     []string{"id"}, NotNull: []string{"total"}})
	if err != nil {
		t.Fatal(err)
	}
	c := &changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Namespace: "public", Name: "orders"},
		After: changelog.Row{Names: []string{"id", "total"}, Values: []changelog.Value{changelog.Number("1"), changelog.Number("9.99")}}}
	line, err := AppendTyped(nil, c, types)
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	var first *coltype.Table
	for i := 0; i < 2; i++ {
		cs, err := d.Decode(line[:len(line)-1], changelog.Position{})
		if err != nil {
			t.Fatal(err)
		}
		got := cs[0].Types
		if got == nil || got.Invalid != "" {
			t.Fatalf("Types = %+v, want the declared table", got)
		}
		if i == 0 {
			first = got
		} else if got != first {
			t.Errorf("the second line's Types is a new table; want the cached one")
		}
		var cols []string
		for _, col := range got.Columns {
			cols = append(cols, col.String())
		}
		want := "id int64 [bigint] not null, total decimal(10,2) [numeric(10,2)] not null, note string [text], at timestamp(3) [timestamp(3) with time zone]"
		if s := strings.Join(cols, ", "); s != want || strings.Join(got.Key, ",") != "id" {
			t.Errorf("Types = %s key %v, want %s key [id]", s, got.Key, want)
		}
	}
}

// TestTypesRefused: a "types" member that is not an object stops the line;
// one whose content cannot be read leaves the line decoded with an Invalid
// table saying why, so only creating a table from it is refused.
func TestTypesRefused(t *testing.T) {
	d, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	const line = `{"op":"+I","table":"t","row":{"id":1},"types":%s}`
	if _, err := d.Decode([]byte(strings.Replace(line, "%s", `"bigint"`, 1)), changelog.Position{}); err == nil ||
		!strings.Contains(err.Error(), `"types" must be an object, not a string`) {
		t.Errorf("a string types: err = %v", err)
	}
	for _, tc := range []struct{ types, want string }{
		{`{"dialect":"oracle","columns":{"id":"number"}}`, `"dialect" must be "postgres" or "mysql", not "oracle"`},
		{`{"dialect":"mysql","columns":{"id":"int"},"key":["nope"]}`, "primary-key column nope is not among the columns"},
		{`{"dialect":"mysql","columns":{"id":"int","id":"int"}}`, `column "id" is declared twice`},
		{`{"dialect":"mysql","columns":{"id":"int"},"not_null":["x"]}`, `not_null names column "x"`},
		{`{"dialect":"mysql","columns":{"id":"int"},"keys":["id"]}`, `unknown field "keys"`},
		{`{"dialect":"mysql","columns":["id"]}`, `"columns" must be an object`},
	} {
		cs, err := d.Decode([]byte(strings.Replace(line, "%s", tc.types, 1)), changelog.Position{})
		if err != nil {
			t.Errorf("%s: the line is refused (%v); want it decoded with an Invalid table", tc.types, err)
			continue
		}
		if got := cs[0].Types; got == nil || !strings.Contains(got.Invalid, tc.want) {
			t.Errorf("%s: Types = %+v, want Invalid holding %q", tc.types, got, tc.want)
		}
	}
}
