package debezium

import (
	"fmt"
	"testing"

	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/schema/coltype"
)

// TestKeyedTypes keys a value's table by the columns its record key's
// schema declares, in the key's order, one table shared by every record
// of the same key schema; a key without a schema, of a type other than
// a struct, or naming a column the value lacks leaves the table as it is.
func TestKeyedTypes(t *testing.T) {
	d, err := New(format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tbl := &coltype.Table{From: "the Kafka Connect schema", Columns: []coltype.Column{
		{Name: "name", Nullable: true}, {Name: "id", Nullable: true}, {Name: "tenant"}}}
	key := func(fields string, payload string) []byte {
		return []byte(`{"schema":{"type":"struct","fields":` + fields + `,"optional":false},"payload":` + payload + `}`)
	}
	two := `[{"type":"int32","field":"tenant"},{"type":"int64","field":"id"}]`
	first := d.KeyedTypes(tbl, key(two, `{"tenant":1,"id":7}`))
	if fmt.Sprint(first.Key) != "[tenant id]" {
		t.Fatalf("Key = %v, want [tenant id]", first.Key)
	}
	if c, _ := first.Column("id"); c.Nullable {
		t.Errorf("key column id is NULL-able")
	}
	if again := d.KeyedTypes(tbl, key(two, `{"tenant":2,"id":8}`)); again != first {
		t.Errorf("a second record of the key schema got another table")
	}
	if len(tbl.Key) != 0 {
		t.Errorf("the shared value table was changed: Key %v", tbl.Key)
	}
	for _, k := range []string{
		`{"tenant":1,"id":7}`, // no schema envelope
		`{"schema":{"type":"int64","optional":false},"payload":7}`,     // a primitive key
		string(key(`[{"type":"int64","field":"nope"}]`, `{"nope":1}`)), // a column the value lacks
		``,
	} {
		if got := d.KeyedTypes(tbl, []byte(k)); got != tbl {
			t.Errorf("key %s: got a keyed table %v, want the table as it is", k, got.Key)
		}
	}
}

// BenchmarkKeyedTypes is the cost a Kafka record with a Debezium key
// adds to its decoding, for a key schema and table seen before.
func BenchmarkKeyedTypes(b *testing.B) {
	d, err := New(format.Options{})
	if err != nil {
		b.Fatal(err)
	}
	tbl := &coltype.Table{Columns: []coltype.Column{{Name: "id"}, {Name: "name"}}}
	key := []byte(`{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"}],"optional":false,"name":"k.Key"},"payload":{"id":1001}}`)
	d.KeyedTypes(tbl, key)
	b.ReportAllocs()
	for b.Loop() {
		if d.KeyedTypes(tbl, key) == tbl {
			b.Fatal("not keyed")
		}
	}
}
