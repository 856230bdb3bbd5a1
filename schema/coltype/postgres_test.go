package coltype

import (
	"reflect"
	"testing"
)

// TestParsePostgres reads every type format_type writes for the built-in
// types txsink maps, and refuses the rest, naming why.
func TestParsePostgres(t *testing.T) {
	cases := []struct {
		in   string
		want Type
	}{
		{"boolean", Type{Kind: Bool}},
		{"smallint", Type{Kind: Int, Bits: 16}},
		{"integer", Type{Kind: Int, Bits: 32}},
		{"bigint", Type{Kind: Int, Bits: 64}},
		{"real", Type{Kind: Float, Bits: 32}},
		{"double precision", Type{Kind: Float, Bits: 64}},
		{"numeric(10,2)", Type{Kind: Decimal, Precision: 10, Scale: 2}},
		{"numeric(38,0)", Type{Kind: Decimal, Precision: 38}},
		{"numeric", Type{Kind: Decimal, Scale: VariableScale}},
		{"text", Type{Kind: String}},
		{"character varying(255)", Type{Kind: String, Length: 255}},
		{"character varying", Type{Kind: String}},
		{"character(3)", Type{Kind: String, Length: 3, Fixed: true}},
		{"bytea", Type{Kind: Bytes}},
		{"date", Type{Kind: Date}},
		{"time without time zone", Type{Kind: Time, Frac: 6}},
		{"time(3) without time zone", Type{Kind: Time, Frac: 3}},
		{"timestamp without time zone", Type{Kind: DateTime, Frac: 6}},
		{"timestamp(0) without time zone", Type{Kind: DateTime}},
		{"timestamp(3) with time zone", Type{Kind: Timestamp, Frac: 3}},
		{"timestamp with time zone", Type{Kind: Timestamp, Frac: 6}},
		{"json", Type{Kind: JSON}},
		{"jsonb", Type{Kind: JSON}},
		{"uuid", Type{Kind: UUID}},
		{"numeric(5,-2)", Type{Kind: Unsupported, Why: "its scale is not 0 to its precision"}},
		{"integer[]", Type{Kind: Unsupported, Why: "txsink does not create array columns"}},
		{"character varying(20)[]", Type{Kind: Unsupported, Why: "txsink does not create array columns"}},
		{"time with time zone", Type{Kind: Unsupported, Why: "no other target has a time of day with a time zone"}},
		{"point", Type{Kind: Unsupported, Why: "txsink does not create spatial columns"}},
		{"interval", Type{Kind: Unsupported, Why: "txsink does not know this PostgreSQL type"}},
		{"mood", Type{Kind: Unsupported, Why: "txsink does not know this PostgreSQL type"}},
		{"numeric(10", Type{Kind: Unsupported, Why: "its parentheses are not closed"}},
		{"numeric(a,b)", Type{Kind: Unsupported, Why: "its parameters are not numbers"}},
	}
	for _, tc := range cases {
		got := ParsePostgres(tc.in)
		tc.want.Source = tc.in
		if tc.want.Kind == Unsupported {
			// What was read before the refusal does not matter.
			tc.want.Precision, tc.want.Scale = got.Precision, got.Scale
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParsePostgres(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}
