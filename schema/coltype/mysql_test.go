package coltype

import (
	"reflect"
	"testing"
)

func TestParseMySQL(t *testing.T) {
	cases := []struct {
		in   string
		want Type
	}{
		{"int(11)", Type{Kind: Int, Bits: 32}},
		{"bigint(20) unsigned", Type{Kind: Int, Bits: 64, Unsigned: true}},
		{"tinyint(1)", Type{Kind: Int, Bits: 8}},
		{"mediumint", Type{Kind: Int, Bits: 24}},
		{"year(4)", Type{Kind: Int, Bits: 16}},
		{"bit(3)", Type{Kind: Int, Bits: 64, Unsigned: true}},
		{"decimal(65,30)", Type{Kind: Decimal, Precision: 65, Scale: 30}},
		{"decimal", Type{Kind: Decimal, Precision: 10}},
		{"DECIMAL(10,2) UNSIGNED", Type{Kind: Decimal, Precision: 10, Scale: 2}},
		{"float", Type{Kind: Float, Bits: 32}},
		{"double", Type{Kind: Float, Bits: 64}},
		{"varchar(255)", Type{Kind: String, Length: 255}},
		{"char(3)", Type{Kind: String, Length: 3, Fixed: true}},
		{"longtext", Type{Kind: String}},
		{"varbinary(16)", Type{Kind: Bytes, Length: 16}},
		{"binary(16)", Type{Kind: Bytes, Length: 16, Fixed: true}},
		{"blob", Type{Kind: Bytes}},
		{"date", Type{Kind: Date}},
		{"datetime(6)", Type{Kind: DateTime, Frac: 6}},
		{"timestamp(3)", Type{Kind: Timestamp, Frac: 3}},
		{"time", Type{Kind: Time}},
		{"json", Type{Kind: JSON}},
		{"enum('a','It''s','b,c')", Type{Kind: Enum, Values: []string{"a", "It's", "b,c"}}},
		{"geometry", Type{Kind: Unsupported, Why: "txsink does not create spatial columns"}},
		{"datetime(7)", Type{Kind: Unsupported, Why: "its fractional-second precision is not 0 to 6"}},
		{"varchar(10", Type{Kind: Unsupported, Why: "its parentheses are not closed"}},
		{"hyperloglog", Type{Kind: Unsupported, Why: "txsink does not know this MySQL type"}},
	}
	for _, tc := range cases {
		got := ParseMySQL(tc.in)
		tc.want.Source = tc.in
		if tc.want.Kind == Unsupported {
			tc.want.Frac = got.Frac // what was read before the refusal does not matter
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseMySQL(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestWithKey(t *testing.T) {
	tbl := &Table{From: "mysqlType", Columns: []Column{{Name: "id", Nullable: true}, {Name: "v", Nullable: true}}}
	keyed, err := tbl.WithKey([]string{"ID"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(keyed.Key, []string{"id"}) || keyed.Columns[0].Nullable || !keyed.Columns[1].Nullable {
		t.Errorf("WithKey: %+v", keyed)
	}
	if !tbl.Columns[0].Nullable {
		t.Error("WithKey changed the shared table")
	}
	if _, err := tbl.WithKey([]string{"nope"}); err == nil || err.Error() != "primary-key column nope is not among the columns mysqlType declares (id, v)" {
		t.Errorf("missing key column: %v", err)
	}
}
