package reduce_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/reduce"
)

// TestUnitOrders checks the places a unit carries (commit.Unit.Orders):
// per partition and log the latest consumed, a new start of logs (a
// snapshot) dropping theirs and noted where it came, in a buffer and
// through Merge.
func TestUnitOrders(t *testing.T) {
	at := func(part, log string, lsn uint64) *changelog.Change {
		return &changelog.Change{Pos: changelog.Position{Partition: part, Offset: int64(lsn)},
			Order: &changelog.Order{Log: log, At: [2]uint64{1, lsn}}}
	}
	restart := &changelog.Change{Pos: changelog.Position{Partition: "p", Offset: 50}, Order: &changelog.Order{Log: "mysql:a", Restart: true}}
	now := time.Unix(0, 0)
	a := reduce.NewBuffer("x")
	for _, c := range []*changelog.Change{at("p", "mysql:a:1", 10), at("p", "mysql:a:1", 12), at("q", "mysql:a:1", 3), at("p", "mysql:b:1", 7), at("p", "mysql:a:1", 11)} {
		a.SkipChange(c, now)
	}
	b := reduce.NewBuffer("x")
	b.SkipChange(restart, now)
	b.SkipChange(at("p", "mysql:a:1", 2), now)
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	got := a.Take().Orders
	want := []commit.Order{
		{Partition: "q", Order: changelog.Order{Log: "mysql:a:1", At: [2]uint64{1, 3}}},
		{Partition: "p", Order: changelog.Order{Log: "mysql:b:1", At: [2]uint64{1, 7}}},
		{Partition: "p", Order: changelog.Order{Log: "mysql:a", Restart: true}},
		{Partition: "p", Order: changelog.Order{Log: "mysql:a:1", At: [2]uint64{1, 2}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Orders =\n%+v\nwant\n%+v", got, want)
	}
}
