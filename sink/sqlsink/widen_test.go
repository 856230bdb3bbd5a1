package sqlsink_test

import (
	"testing"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/schema/coltype"
	"github.com/txsink/txsink/sink/sqlsink"
)

// TestWidening decides, for each pair of a target column and a declared
// type, whether it is a safe widening, nothing, or a change txsink
// never makes.
func TestWidening(t *testing.T) {
	varchar := func(n int) schema.Column { return schema.Column{Class: schema.String, Length: n, SQLType: "varchar"} }
	cases := []struct {
		name   string
		cur    schema.Column
		decl   coltype.Type
		wider  bool
		change bool
		check  func(schema.Column) bool
	}{
		{"varchar longer", varchar(5), coltype.Type{Kind: coltype.String, Length: 10}, true, false, func(c schema.Column) bool { return c.Length == 10 }},
		{"varchar shorter", varchar(5), coltype.Type{Kind: coltype.String, Length: 3}, false, false, nil},
		{"string without a length", varchar(5), coltype.Type{Kind: coltype.String}, false, false, nil},
		{"unbounded text", varchar(0), coltype.Type{Kind: coltype.String, Length: 10}, false, false, nil},
		{"char to varchar", schema.Column{Class: schema.String, Length: 5, Fixed: true}, coltype.Type{Kind: coltype.String, Length: 10}, false, true, nil},
		{"varbinary longer", schema.Column{Class: schema.Bytes, Length: 4}, coltype.Type{Kind: coltype.Bytes, Length: 8}, true, false, func(c schema.Column) bool { return c.Length == 8 }},
		{"int to bigint", schema.Column{Class: schema.Int, Bits: 32}, coltype.Type{Kind: coltype.Int, Bits: 64}, true, false, func(c schema.Column) bool { return c.Bits == 64 }},
		{"bigint to int", schema.Column{Class: schema.Int, Bits: 64}, coltype.Type{Kind: coltype.Int, Bits: 32}, false, false, nil},
		{"int to unsigned int", schema.Column{Class: schema.Int, Bits: 32}, coltype.Type{Kind: coltype.Int, Bits: 32, Unsigned: true}, true, false, func(c schema.Column) bool { return c.Bits == 64 }},
		{"bigint to unsigned bigint", schema.Column{Class: schema.Int, Bits: 64}, coltype.Type{Kind: coltype.Int, Bits: 64, Unsigned: true}, false, true, nil},
		{"unsigned to signed", schema.Column{Class: schema.Uint, Bits: 32}, coltype.Type{Kind: coltype.Int, Bits: 64}, false, true, nil},
		{"unsigned wider", schema.Column{Class: schema.Uint, Bits: 16}, coltype.Type{Kind: coltype.Int, Bits: 32, Unsigned: true}, true, false, func(c schema.Column) bool { return c.Bits == 32 }},
		{"unsigned bigint as decimal", schema.Column{Class: schema.Decimal, Precision: 20}, coltype.Type{Kind: coltype.Int, Bits: 64, Unsigned: true}, false, false, nil},
		{"decimal precision up", schema.Column{Class: schema.Decimal, Precision: 10, Scale: 2}, coltype.Type{Kind: coltype.Decimal, Precision: 12, Scale: 2}, true, false, func(c schema.Column) bool { return c.Precision == 12 && c.Scale == 2 }},
		{"decimal scale up", schema.Column{Class: schema.Decimal, Precision: 10, Scale: 2}, coltype.Type{Kind: coltype.Decimal, Precision: 12, Scale: 4}, false, true, nil},
		{"variable scale", schema.Column{Class: schema.Decimal, Precision: 10, Scale: 2}, coltype.Type{Kind: coltype.Decimal, Scale: coltype.VariableScale}, false, false, nil},
		{"datetime fraction up", schema.Column{Class: schema.DateTime, FracDigits: 3}, coltype.Type{Kind: coltype.DateTime, Frac: 6}, true, false, func(c schema.Column) bool { return c.FracDigits == 6 }},
		{"datetime to timestamp", schema.Column{Class: schema.DateTime, FracDigits: 3}, coltype.Type{Kind: coltype.Timestamp, Frac: 6}, false, true, nil},
		{"int to text", schema.Column{Class: schema.Int, Bits: 32}, coltype.Type{Kind: coltype.String, Length: 10}, false, true, nil},
		{"boolean as tinyint", schema.Column{Class: schema.Int, Bits: 8}, coltype.Type{Kind: coltype.Bool}, false, false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			to, wider, change := sqlsink.Widening(tc.cur, tc.decl)
			if wider != tc.wider || (change != "") != tc.change {
				t.Fatalf("wider %v, change %q; want wider %v, a change %v", wider, change, tc.wider, tc.change)
			}
			if tc.check != nil && !tc.check(to) {
				t.Errorf("widened to %+v", to)
			}
		})
	}
}
