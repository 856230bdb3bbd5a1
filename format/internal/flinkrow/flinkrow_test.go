package flinkrow

import (
	"reflect"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
)

func TestJavaFloatString(t *testing.T) {
	for _, tc := range []struct {
		in   float32
		want string
	}{
		{3.14, "3.14"}, {1, "1.0"}, {0.875, "0.875"}, {22.2, "22.2"}, {0.1, "0.1"},
		{100, "100.0"}, {-5.17, "-5.17"}, {0, "0.0"}, {0.001, "0.001"}, {1e7, "1.0E7"},
		{1.5e-4, "1.5E-4"}, {123456.7, "123456.7"}, {float32(5.099999904632568), "5.1"},
	} {
		if got := JavaFloatString(tc.in); got != tc.want {
			t.Errorf("JavaFloatString(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLines(t *testing.T) {
	row := func(id, weight changelog.Value) changelog.Row {
		return changelog.RowOf("id", id, "name", "hammer", "description", nil, "weight", weight)
	}
	for _, tc := range []struct {
		name string
		c    changelog.Change
		want []string
	}{
		{"insert", changelog.Change{Kind: changelog.Insert, After: row(changelog.Number("1"), changelog.Number("3.140000104904175"))},
			[]string{"+I(1,hammer,null,3.14)"}},
		{"update with before", changelog.Change{Kind: changelog.UpdateAfter, Before: row("1", "1"), After: row("1", "5.17")},
			[]string{"-U(1,hammer,null,1.0)", "+U(1,hammer,null,5.17)"}},
		{"update without before", changelog.Change{Kind: changelog.UpdateAfter, After: row("1", "1")},
			[]string{"+U(1,hammer,null,1.0)"}},
		{"update before", changelog.Change{Kind: changelog.UpdateBefore, Before: row("1", "1")},
			[]string{"-U(1,hammer,null,1.0)"}},
		{"delete", changelog.Change{Kind: changelog.Delete, Before: row("1", "0.8")},
			[]string{"-D(1,hammer,null,0.8)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Lines(tc.c)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Lines = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := Lines(changelog.Change{Kind: changelog.Insert, After: changelog.RowOf("name", "x", "id", "1", "description", nil, "weight", "1")}); err == nil {
		t.Error("a row in the wrong column order printed without an error")
	}
	if _, err := Lines(changelog.Change{Kind: changelog.Insert, After: row("1", "heavy")}); err == nil {
		t.Error("a weight that is not a number printed without an error")
	}
}

func TestTable(t *testing.T) {
	tb := NewTable("id")
	for _, c := range []changelog.Change{
		{Kind: changelog.Insert, After: changelog.RowOf("id", changelog.Number("1"), "a", "x")},
		{Kind: changelog.Insert, After: changelog.RowOf("id", "2", "a", "y", "b", changelog.Number("7"))},
		{Kind: changelog.UpdateBefore, Before: changelog.RowOf("id", "2")},
		{Kind: changelog.UpdateAfter, After: changelog.RowOf("id", "1", "a", "z")},
		{Kind: changelog.Insert, After: changelog.RowOf("id", "3", "a", nil)},
		{Kind: changelog.Delete, Before: changelog.RowOf("id", changelog.Number("3"))},
	} {
		if err := tb.Apply(c); err != nil {
			t.Fatal(err)
		}
	}
	got, err := tb.Lines([]string{"id", "a", "b"})
	if want := []string{"+I[1, z, NULL]", "+I[2, y, 7]"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Lines = %q, %v; want %q", got, err, want)
	}
	if err := tb.Apply(changelog.Change{Kind: changelog.Delete, Before: changelog.RowOf("a", "x")}); err == nil {
		t.Error("a delete without the key column applied without an error")
	}
}

func TestSchemaColumns(t *testing.T) {
	schema := "# comment\nid STRING NOT NULL\nname   STRING\n\nPRIMARY KEY (id)\n"
	if got := SchemaColumns(schema); strings.Join(got, ",") != "id,name" {
		t.Errorf("SchemaColumns = %q", got)
	}
	if got := ExpectedLines("# c\n+I[1]\n\n+I[2]\n"); strings.Join(got, ",") != "+I[1],+I[2]" {
		t.Errorf("ExpectedLines = %q", got)
	}
}
