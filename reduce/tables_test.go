package reduce

import (
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
)

// TestTables checks that a Tables finds a table by names at the addresses
// it was given and by copies of them, forgets a replaced or cleared
// Table, and tells apart tables whose names share a prefix or an address.
func TestTables(t *testing.T) {
	orders, items, bare := &Table{}, &Table{}, &Table{}
	shop := "shop.orders_items"
	srcOrders := changelog.Table{Namespace: shop[:4], Name: shop[5:11]}
	srcItems := changelog.Table{Namespace: shop[:4], Name: shop[5:]}
	srcBare := changelog.Table{Name: "orders"}
	copyOf := func(src changelog.Table) changelog.Table {
		return changelog.Table{Namespace: strings.Clone(src.Namespace), Name: strings.Clone(src.Name)}
	}
	var ts Tables
	if _, ok := ts.Get(srcOrders); ok {
		t.Fatal("the zero Tables found a table")
	}
	ts.Put(srcOrders, orders)
	ts.Put(srcItems, items)
	ts.Put(srcBare, bare)
	for _, tc := range []struct {
		name string
		src  changelog.Table
		want *Table
	}{
		{"the names it was given", srcOrders, orders},
		{"again, from the front", srcOrders, orders},
		{"a longer name at the same address", srcItems, items},
		{"copies of the names", copyOf(srcItems), items},
		{"no namespace", srcBare, bare},
		{"no namespace, copied", copyOf(srcBare), bare},
		{"another namespace", changelog.Table{Namespace: "shop2", Name: srcOrders.Name}, nil},
		{"a prefix of a name", changelog.Table{Namespace: srcOrders.Namespace, Name: srcOrders.Name[:3]}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ts.Get(tc.src)
			if got != tc.want || ok != (tc.want != nil) {
				t.Errorf("Get(%v) = %p, %v; want %p", tc.src, got, ok, tc.want)
			}
		})
	}
	other := &Table{}
	ts.Put(copyOf(srcOrders), other)
	if got, _ := ts.Get(srcOrders); got != other {
		t.Errorf("after Put of another Table, Get = %p, want %p", got, other)
	}
	n := 0
	ts.All(func(changelog.Table, *Table) { n++ })
	if n != 3 {
		t.Errorf("All saw %d tables, want 3", n)
	}
	ts.Clear()
	if got, ok := ts.Get(srcOrders); ok {
		t.Errorf("after Clear, Get = %p, true", got)
	}
}
