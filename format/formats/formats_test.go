package formats

import (
	"reflect"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
)

func TestNew(t *testing.T) {
	want := []string{"debezium-json", "canal-json", "maxwell-json", "ogg-json", "flink-changelog-json", "txsink-json"}
	if got := Names(); !reflect.DeepEqual(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	records := map[string]string{
		"debezium-json":        `{"op":"c","after":{"id":1},"source":{"db":"d","table":"t"}}`,
		"canal-json":           `{"data":[{"id":"1"}],"database":"d","table":"t","type":"INSERT","isDdl":false}`,
		"maxwell-json":         `{"database":"d","table":"t","type":"insert","data":{"id":1}}`,
		"ogg-json":             `{"table":"d.t","op_type":"I","after":{"id":1}}`,
		"flink-changelog-json": `{"data":{"id":1},"op":"+I"}`,
		"txsink-json":          `{"op":"+I","table":"d.t","row":{"id":1}}`,
	}
	// Options a format requires.
	opts := map[string]format.Options{
		"flink-changelog-json": {"flink-changelog-json.table": "d.t"},
	}
	for _, name := range Names() {
		d, err := New(name, opts[name])
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
	_, err := New("kafka-json", nil)
	if err == nil || !strings.Contains(err.Error(), `"kafka-json"`) ||
		!strings.Contains(err.Error(), "debezium-json, canal-json, maxwell-json, ogg-json, flink-changelog-json, txsink-json") {
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
