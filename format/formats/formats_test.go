package formats

import (
	"reflect"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
)

func TestNew(t *testing.T) {
	if got, want := Names(), []string{"debezium-json", "txsink-json"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	records := map[string]string{
		"debezium-json": `{"op":"c","after":{"id":1},"source":{"db":"d","table":"t"}}`,
		"txsink-json":   `{"op":"+I","table":"d.t","row":{"id":1}}`,
	}
	for _, name := range Names() {
		d, err := New(name, nil)
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		cs, err := d.Decode([]byte(records[name]), changelog.Position{Partition: "p", Seq: 1})
		if err != nil || len(cs) != 1 || cs[0].Kind != changelog.Insert || cs[0].Table.String() != "d.t" {
			t.Errorf("%s decoder: %v, %v", name, cs, err)
		}
	}
}

func TestNewErrors(t *testing.T) {
	_, err := New("canal-json", nil)
	if err == nil || !strings.Contains(err.Error(), `"canal-json"`) || !strings.Contains(err.Error(), "debezium-json, txsink-json") {
		t.Errorf("unknown format: %v", err)
	}
	for _, name := range Names() {
		d, err := New(name, format.Options{"no.such-option": "1"})
		if err == nil || !strings.Contains(err.Error(), `"no.such-option"`) {
			t.Errorf("%s with an unknown option: %v", name, err)
		}
		if d != nil {
			t.Errorf("%s: New returned a non-nil decoder %#v with its error", name, d)
		}
	}
}
