package box

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
)

// TestBoxes checks the interface layout the package relies on: its
// interfaces behave as ones made by conversion, for type switches,
// equality, reflection and formatting, also after a collection.
func TestBoxes(t *testing.T) {
	hdrs := []string{"scooter", "3.14"}
	s, n := String(&hdrs[0]), Number(&hdrs[1])
	hdrs = nil
	runtime.GC()
	if x, ok := s.(string); !ok || x != "scooter" || s != any("scooter") {
		t.Errorf("string: %#v", s)
	}
	if x, ok := n.(changelog.Number); !ok || x != "3.14" || n != any(changelog.Number("3.14")) {
		t.Errorf("number: %#v", n)
	}
	if _, ok := n.(string); ok {
		t.Error("a Number boxed as a string")
	}
	if !reflect.DeepEqual([]any{s, n}, []any{"scooter", changelog.Number("3.14")}) {
		t.Errorf("DeepEqual: %#v %#v", s, n)
	}
	if got := fmt.Sprintf("%v|%v", s, n); got != "scooter|3.14" {
		t.Errorf("Sprintf = %q", got)
	}
	when := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	vals := []int64{1 << 40}
	times := []time.Time{when}
	i, tm := Int64(&vals[0]), Time(&times[0])
	vals, times = nil, nil
	runtime.GC()
	if i != any(int64(1<<40)) || tm != any(when) {
		t.Errorf("int64 and time: %#v %#v", i, tm)
	}
	if _, ok := i.(int); ok {
		t.Error("an int64 boxed as an int")
	}
}
