package sqlsink_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink/sqlsink"
)

// fkTable is a table with primary key id and the foreign keys fks.
func fkTable(name string, fks ...schema.ForeignKey) *schema.Table {
	return &schema.Table{Name: name, PrimaryKey: []string{"id"}, ForeignKeys: fks}
}

// ref is foreign key name to parent(id), declared as flags say
// ("deferrable", "deferred").
func ref(name, parent string, flags ...string) schema.ForeignKey {
	fk := schema.ForeignKey{Name: name, Columns: []string{parent + "_id"}, Parent: schema.Name{Name: parent}, ParentColumns: []string{"id"}}
	for _, f := range flags {
		switch f {
		case "deferrable":
			fk.Deferrable = true
		case "deferred":
			fk.Deferrable, fk.Deferred = true, true
		}
	}
	return fk
}

// TestOrder checks the order of a unit's steps under foreign keys: a
// parent's writes first, a child's deletes first, a child's writes before
// its parent's deletes, deletes before writes where nothing else decides,
// and a cycle deferred where it can be and refused where it cannot.
func TestOrder(t *testing.T) {
	orders := fkTable("orders")
	items := fkTable("order_items", ref("items_order", "orders"))
	notes := fkTable("item_notes", ref("notes_item", "order_items"))
	selfRef := fkTable("tree", ref("tree_parent", "tree"))
	a := fkTable("a", ref("a_b", "b"))
	b := fkTable("b", ref("b_a", "a"))
	aDef := fkTable("a", ref("a_b", "b", "deferrable"))
	bDef := fkTable("b", ref("b_a", "a", "deferrable"))
	aLate := fkTable("a", ref("a_b", "b", "deferred"))
	all := func(n int) []bool {
		v := make([]bool, n)
		for i := range v {
			v[i] = true
		}
		return v
	}
	cases := []struct {
		name            string
		tables          []*schema.Table
		deletes, writes []bool
		canDefer        bool
		want            string
		wantDefer       bool
		wantCycle       string // a substring of the error, "" for none
	}{
		{name: "no foreign keys: commit's order", tables: []*schema.Table{fkTable("x"), fkTable("y")}, deletes: all(2), writes: all(2),
			want: "delete x, delete y, write x, write y"},
		{name: "three levels, children first in the unit", tables: []*schema.Table{notes, items, orders}, deletes: all(3), writes: all(3),
			want: "delete item_notes, write orders, write order_items, write item_notes, delete order_items, delete orders"},
		{name: "three levels, deletes only", tables: []*schema.Table{orders, items, notes}, deletes: all(3), writes: make([]bool, 3),
			want: "delete item_notes, delete order_items, delete orders"},
		{name: "three levels, writes only", tables: []*schema.Table{notes, items, orders}, deletes: make([]bool, 3), writes: all(3),
			want: "write orders, write order_items, write item_notes"},
		{name: "parent deleted, child written (moved away, or cascaded)", tables: []*schema.Table{orders, items}, deletes: []bool{true, false}, writes: []bool{false, true},
			want: "write order_items, delete orders"},
		{name: "a table referencing itself: writes, then deletes", tables: []*schema.Table{selfRef}, deletes: all(1), writes: all(1),
			want: "write tree, delete tree"},
		{name: "a cycle of two tables, both written", tables: []*schema.Table{a, b}, deletes: make([]bool, 2), writes: all(2),
			wantCycle: "a_b: a(b_id) → b(id), b_a: b(a_id) → a(id)"},
		{name: "a cycle, deferrable, on a server that defers", tables: []*schema.Table{aDef, bDef}, deletes: all(2), writes: all(2), canDefer: true,
			want: "delete a, delete b, write a, write b", wantDefer: true},
		{name: "a cycle, deferrable, on a server that cannot defer", tables: []*schema.Table{aDef, bDef}, deletes: make([]bool, 2), writes: all(2),
			wantCycle: "a_b"},
		{name: "a cycle, one key half deferrable", tables: []*schema.Table{aDef, b}, deletes: make([]bool, 2), writes: all(2), canDefer: true,
			wantCycle: "b_a"},
		{name: "a cycle broken by an INITIALLY DEFERRED key", tables: []*schema.Table{aLate, b}, deletes: make([]bool, 2), writes: all(2),
			want: "write a, write b"},
		{name: "a cycle the unit writes one table of", tables: []*schema.Table{a, b}, deletes: []bool{false, true}, writes: []bool{true, false},
			want: "write a, delete b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			steps, deferAll, err := sqlsink.Order(tc.tables, tc.deletes, tc.writes, tc.canDefer)
			if tc.wantCycle != "" {
				var ce *sqlsink.CycleError
				if !errors.As(err, &ce) {
					t.Fatalf("got %v, %v; want a CycleError", steps, err)
				}
				if !strings.Contains(err.Error(), tc.wantCycle) {
					t.Errorf("error %q does not name %q", err, tc.wantCycle)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range steps {
				verb := "write "
				if s.Delete {
					verb = "delete "
				}
				got = append(got, verb+tc.tables[s.Table].Name)
			}
			if g := strings.Join(got, ", "); g != tc.want {
				t.Errorf("order\n got: %s\nwant: %s", g, tc.want)
			}
			if deferAll != tc.wantDefer {
				t.Errorf("deferAll = %v, want %v", deferAll, tc.wantDefer)
			}
		})
	}
}
