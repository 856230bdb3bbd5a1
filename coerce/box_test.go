package coerce

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"

	"github.com/txsink/txsink/changelog"
)

// TestTextOf checks the interface layout textOf relies on: its result
// behaves as a string converted to an interface, also after a collection,
// and the Number it came from is unchanged.
func TestTextOf(t *testing.T) {
	v := changelog.Value(changelog.Number(fmt.Sprint(969.6)))
	s := textOf(v)
	runtime.GC()
	if x, ok := s.(string); !ok || x != "969.6" || s != any("969.6") {
		t.Errorf("textOf = %#v", s)
	}
	if _, ok := s.(changelog.Number); ok {
		t.Error("textOf kept the Number type")
	}
	if !reflect.DeepEqual(s, "969.6") || fmt.Sprintf("%q", s) != `"969.6"` {
		t.Errorf("reflect, fmt: %#v", s)
	}
	if v != any(changelog.Number("969.6")) {
		t.Errorf("the Number changed: %#v", v)
	}
	if got := textOf("x"); got != any("x") {
		t.Errorf("textOf(string) = %#v", got)
	}
	if got := textOf(int64(7)); got != any(int64(7)) {
		t.Errorf("textOf(int64) = %#v", got)
	}
}
