package debezium

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/schema/coltype"
)

// TestTypesFromConnectSchema checks that a change decoded with the schema
// envelope carries the table its Connect schema declares, each column's
// type and optionality, one value shared by every change of that schema.
func TestTypesFromConnectSchema(t *testing.T) {
	data, err := os.ReadFile("testdata/mysql-types-connect.json")
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := d.Decode(data, changelog.Position{Partition: "p0", Seq: 1})
	if err != nil {
		t.Fatal(err)
	}
	again, err := d.Decode(data, changelog.Position{Partition: "p0", Seq: 2})
	if err != nil {
		t.Fatal(err)
	}
	types := cs[0].Types
	if types == nil || again[0].Types != types {
		t.Fatalf("Types = %p then %p: want one shared table", types, again[0].Types)
	}
	var got []string
	for _, c := range types.Columns {
		got = append(got, c.String())
	}
	want := []string{
		"id int32 [int32] not null",
		"price decimal(10,2) [org.apache.kafka.connect.data.Decimal]",
		"balance decimal(20,4) [org.apache.kafka.connect.data.Decimal]",
		"created datetime(3) [io.debezium.time.Timestamp]",
		"updated timestamp(6) [io.debezium.time.ZonedTimestamp]",
		"birth date [io.debezium.time.Date]",
		"opens time(6) [io.debezium.time.MicroTime]",
		"seen datetime(6) [io.debezium.time.MicroTimestamp]",
		"doc json [io.debezium.data.Json]",
		"blob bytes [bytes]",
		"flag int16 [int16]",
		"ratio float64 [double]",
		"note string [string]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("columns:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	bare, err := os.ReadFile("testdata/mysql-types-bare.json")
	if err != nil {
		t.Fatal(err)
	}
	cs, err = d.Decode(bare, changelog.Position{Partition: "p0", Seq: 3})
	if err != nil {
		t.Fatal(err)
	}
	if cs[0].Types != nil {
		t.Errorf("a record without the schema envelope carries types %+v", cs[0].Types)
	}
}

// TestColumnType checks the mapping of each logical type, and the
// refinement by the source's type when the connector propagates it.
func TestColumnType(t *testing.T) {
	params := func(kv ...string) map[string][]byte {
		m := map[string][]byte{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = []byte(`"` + kv[i+1] + `"`)
		}
		return m
	}
	cases := []struct {
		typ, name string
		params    map[string][]byte
		want      coltype.Type
	}{
		{"string", "", params(paramSourceType, "VARCHAR", paramSourceLength, "20"), coltype.Type{Kind: coltype.String, Length: 20, Source: "varchar(20)"}},
		{"string", "", params(paramSourceType, "CHAR", paramSourceLength, "2"), coltype.Type{Kind: coltype.String, Length: 2, Fixed: true, Source: "char(2)"}},
		{"bytes", logicalDecimal, params("scale", "2", paramSourceType, "DECIMAL", paramSourceLength, "12", paramSourceScale, "2"),
			coltype.Type{Kind: coltype.Decimal, Precision: 12, Scale: 2, Source: "decimal(12,2)"}},
		{"int64", "", params(paramSourceType, "INT UNSIGNED", paramSourceLength, "10"), coltype.Type{Kind: coltype.Int, Bits: 32, Unsigned: true, Source: "int(10) unsigned"}},
		{"struct", logicalVarDecimal, nil, coltype.Type{Kind: coltype.Decimal, Scale: coltype.VariableScale, Source: logicalVarDecimal}},
		{"int64", logicalNanoTimestamp, nil, coltype.Type{Kind: coltype.DateTime, Frac: 6, Source: logicalNanoTimestamp}},
		{"string", logicalUUID, nil, coltype.Type{Kind: coltype.UUID, Source: logicalUUID}},
		{"string", logicalEnum, params("allowed", "a,b"), coltype.Type{Kind: coltype.Enum, Values: []string{"a", "b"}, Source: logicalEnum}},
		{"bytes", logicalBits, params("length", "9"), coltype.Type{Kind: coltype.Bytes, Length: 2, Source: logicalBits}},
		{"struct", "io.debezium.data.geometry.Point", nil, coltype.Type{Kind: coltype.Unsupported, Why: "txsink does not create spatial columns", Source: "io.debezium.data.geometry.Point"}},
		{"array", "", nil, coltype.Type{Kind: coltype.Unsupported, Why: `Connect type "array" has no column type`, Source: "array"}},
	}
	for _, tc := range cases {
		f := connectSchema{Type: tc.typ, Name: tc.name, Parameters: map[string]json.RawMessage{}}
		for k, v := range tc.params {
			f.Parameters[k] = v
		}
		got := columnType(f)
		if got.String() != tc.want.String() || got.Why != tc.want.Why {
			t.Errorf("%s %s %v: got %s (%s), want %s (%s)", tc.typ, tc.name, tc.params, got, got.Why, tc.want, tc.want.Why)
		}
	}
}

// TestDefaultsFromConnectSchema reads each field's "default" as its
// values are read: a Decimal's base64 bytes as its text, a Timestamp's
// milliseconds and a Date's days as text, bytes as bytes; a default that
// does not read so makes the declaration Invalid, naming the field.
func TestDefaultsFromConnectSchema(t *testing.T) {
	cases := []struct {
		field string
		want  changelog.Value // nil: Invalid
	}{
		{`{"type":"int32","optional":true,"default":7,"field":"v"}`, changelog.Number("7")},
		{`{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"},"default":"BOI=","field":"v"}`, changelog.Number("12.50")},
		{`{"type":"int64","name":"io.debezium.time.Timestamp","default":1589355606123,"field":"v"}`, "2020-05-13 07:40:06.123"},
		{`{"type":"int32","name":"io.debezium.time.Date","default":18395,"field":"v"}`, "2020-05-13"},
		{`{"type":"bytes","default":"AAH/","field":"v"}`, []byte{0, 1, 0xff}},
		{`{"type":"string","default":"a\"b","field":"v"}`, `a"b`},
		{`{"type":"boolean","default":false,"field":"v"}`, false},
		{`{"type":"string","default":null,"field":"v"}`, nil},
		{`{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"},"default":"not base64!","field":"v"}`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.field, func(t *testing.T) {
			var f connectSchema
			if err := json.Unmarshal([]byte(tc.field), &f); err != nil {
				t.Fatal(err)
			}
			tbl := tableTypes([]connectSchema{f})
			declareDefaults(tbl, []connectSchema{f})
			got := tbl.Columns[0].Default
			invalid := tc.want == nil && strings.Contains(tc.field, "base64")
			switch {
			case invalid && (tbl.Invalid == "" || !strings.Contains(tbl.Invalid, `field "v"`)):
				t.Errorf("Invalid = %q, want it to name the field", tbl.Invalid)
			case !invalid && tbl.Invalid != "":
				t.Errorf("Invalid = %q", tbl.Invalid)
			case fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", tc.want):
				t.Errorf("Default = %#v, want %#v", got, tc.want)
			}
		})
	}
}
