package jsonrecord

import (
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/txsink/txsink/changelog"
)

func TestIsTombstone(t *testing.T) {
	for in, want := range map[string]bool{"": true, " \n": true, "null": true, " null\r\n": true, "{}": false, "nul": false, `"null"`: false} {
		if got := IsTombstone([]byte(in)); got != want {
			t.Errorf("IsTombstone(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestOverlay(t *testing.T) {
	after := changelog.RowOf("id", changelog.Number("1"), "qty", changelog.Number("9"), "note", "x")
	old := changelog.RowOf("qty", changelog.Number("2"), "note", nil, "gone", "y")
	got := Overlay(after, old)
	want := changelog.RowOf("id", changelog.Number("1"), "qty", changelog.Number("2"), "note", nil, "gone", "y")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Overlay = %v, want %v", got, want)
	}
	if v, _ := after.Get("qty"); v != changelog.Number("9") {
		t.Errorf("Overlay changed its input: qty = %v", v)
	}
}

func TestInternTable(t *testing.T) {
	var cache atomic.Pointer[changelog.Table]
	a := InternTable(&cache, []byte("shop"), []byte("orders"))
	b := InternTable(&cache, []byte("shop"), []byte("orders"))
	c := InternTable(&cache, []byte("shop"), []byte("items"))
	if a != b || a.String() != "shop.orders" || c.String() != "shop.items" {
		t.Errorf("got %v %v %v", a, b, c)
	}
	if n := testing.AllocsPerRun(100, func() { InternTable(&cache, []byte("shop"), []byte("items")) }); n != 0 {
		t.Errorf("a cached table allocates %v times", n)
	}
}
