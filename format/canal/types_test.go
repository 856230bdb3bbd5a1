package canal

import (
	"strings"
	"testing"

	"github.com/txsink/txsink/format"
)

// TestTypesFromMysqlType checks that the changes of a message carry the
// table its mysqlType and pkNames declare: the columns in mysqlType's
// order, the key NOT NULL, one value shared by the messages that repeat
// the declaration; and that a declaration that cannot be read leaves the
// rows decodable and says why.
func TestTypesFromMysqlType(t *testing.T) {
	d, err := New(format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := msg("INSERT", `,"mysqlType":{"id":"bigint(20) unsigned","name":"varchar(40)","price":"decimal(10,2)","at":"datetime(6)","kind":"enum('a','b')"},"data":[{"id":"1","name":"x","price":"1.50","at":"2020-01-01 00:00:00","kind":"a"},{"id":"2","name":"y","price":"2.00","at":null,"kind":"b"}]`)
	cs, err := d.Decode(rec, testPos)
	if err != nil {
		t.Fatal(err)
	}
	again, err := d.Decode(rec, testPos)
	if err != nil {
		t.Fatal(err)
	}
	types := cs[0].Types
	if types == nil || cs[1].Types != types || again[0].Types != types {
		t.Fatal("the changes of one declaration do not share one table")
	}
	var got []string
	for _, c := range types.Columns {
		got = append(got, c.String())
	}
	want := "id uint64 [bigint(20) unsigned] not null|name string(40) [varchar(40)]|price decimal(10,2) [decimal(10,2)]|at datetime(6) [datetime(6)]|kind enum(a,b) [enum('a','b')]"
	if strings.Join(got, "|") != want || strings.Join(types.Key, ",") != "id" {
		t.Errorf("got %s key %v, want %s key [id]", strings.Join(got, "|"), types.Key, want)
	}

	bad := []byte(strings.Replace(string(rec), `"pkNames":["id"]`, `"pkNames":["nope"]`, 1))
	cs, err = d.Decode(bad, testPos)
	if err != nil {
		t.Fatalf("a key mysqlType lacks fails the rows: %v", err)
	}
	if cs[0].Types == nil || !strings.Contains(cs[0].Types.Invalid, "primary-key column nope is not among the columns mysqlType declares") {
		t.Errorf("Invalid = %+v", cs[0].Types)
	}
	cs, err = d.Decode(msg("INSERT", `,"data":[{"id":"1"}]`), testPos)
	if err != nil || cs[0].Types != nil {
		t.Errorf("without mysqlType: %v, %+v", err, cs[0].Types)
	}
}
