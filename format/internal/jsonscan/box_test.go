package jsonscan

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"

	"github.com/txsink/txsink/changelog"
)

// TestBoxAt checks the interface layout boxAt relies on: its interfaces
// behave as ones made by conversion, for type switches, equality,
// reflection and formatting, also after a collection.
func TestBoxAt(t *testing.T) {
	hdrs := []string{"scooter", "3.14"}
	s, n := boxAt(stringType, &hdrs[0]), boxAt(numberType, &hdrs[1])
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
}

// TestRowValuesSurviveCollections decodes many rows, collects garbage and
// checks each: boxed values point into a slice nothing else references.
func TestRowValuesSurviveCollections(t *testing.T) {
	var rows []changelog.Row
	for i := range 1000 {
		s := New(fmt.Appendf(nil, `{"id":%d,"name":"n%d","on":true,"doc":[%d]}`, i, i, i))
		r, err := s.Row()
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
		if i%100 == 0 {
			runtime.GC()
		}
	}
	runtime.GC()
	for i, r := range rows {
		want := []changelog.Value{changelog.Number(fmt.Sprint(i)), fmt.Sprint("n", i), true, changelog.JSON(fmt.Sprintf("[%d]", i))}
		if !reflect.DeepEqual(r.Values, want) {
			t.Fatalf("row %d: %#v, want %#v", i, r.Values, want)
		}
	}
}
