package jsonscan

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"

	"github.com/txsink/txsink/changelog"
)

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
