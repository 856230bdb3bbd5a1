package engine

import (
	"reflect"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/config"
)

// TestMarkOrders checks the places stored after a partition's mark: they
// read back as written, a mark stored before txsink stored places reads
// as the source's mark with none, and a place that cannot be read is left
// out rather than refused.
func TestMarkOrders(t *testing.T) {
	pg := changelog.Order{Log: "postgresql:shop", At: [2]uint64{24023000, 24023128}, N: 3}
	bin := changelog.Order{Log: `mysql:odd "name":1`, At: [2]uint64{3, 154}}
	tests := []struct {
		name    string
		src     string
		orders  []changelog.Order
		stored  string // "" when encodeMark's output is read back
		wantSrc string
		want    []changelog.Order
	}{
		{name: "a stream's creation time and two logs", src: "2026-12-04T19:52:51.123Z", orders: []changelog.Order{pg, bin},
			wantSrc: "2026-12-04T19:52:51.123Z", want: []changelog.Order{pg, bin}},
		{name: "places without a source mark", orders: []changelog.Order{bin}, want: []changelog.Order{bin}},
		{name: "no places", src: "abc", wantSrc: "abc"},
		{name: "stored before places were", stored: "2026-12-04T19:52:51Z", wantSrc: "2026-12-04T19:52:51Z"},
		{name: "a place that cannot be read", stored: "m\norder \"postgresql:shop\" 1 x 0\norder \"mysql:a\" 1 2 4", wantSrc: "m",
			want: []changelog.Order{{Log: "mysql:a", At: [2]uint64{1, 2}, N: 4}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stored := tt.stored
			if stored == "" {
				stored = encodeMark(tt.src, tt.orders)
			}
			src, orders := decodeMark(stored)
			if src != tt.wantSrc || !reflect.DeepEqual(orders, tt.want) {
				t.Errorf("decodeMark(%q) = %q, %+v; want %q, %+v", stored, src, orders, tt.wantSrc, tt.want)
			}
		})
	}
}

// TestLatest checks the loop's memory of places: a copy is a change not
// after the latest one of its partition and log, logs and partitions are
// apart, and a reset starts again from the places committed.
func TestLatest(t *testing.T) {
	change := func(part, log string, lsn uint64) *changelog.Change {
		return &changelog.Change{Pos: changelog.Position{Partition: part}, Order: &changelog.Order{Log: log, At: [2]uint64{1, lsn}, N: 1}}
	}
	var m latest
	m.reset(nil, map[string][]changelog.Order{"p": {{Log: "a", At: [2]uint64{1, 10}, N: 1}}})
	steps := []struct {
		c    *changelog.Change
		copy bool
	}{
		{change("p", "a", 9), true},
		{change("p", "a", 10), true}, // the same event: its N tells
		{change("p", "a", 11), false},
		{change("p", "b", 1), false}, // another connector's log
		{change("q", "a", 5), false}, // another partition
		{change("p", "a", 11), true},
		{change("p", "b", 1), true},
		{&changelog.Change{Pos: changelog.Position{Partition: "p"}}, false}, // no place: never a copy
	}
	for i, s := range steps {
		if got := m.copyOf(s.c); got != s.copy {
			t.Errorf("step %d (%s %+v): copy %v, want %v", i, s.c.Pos.Partition, s.c.Order, got, s.copy)
		}
	}
	// What was read and not committed is no copy once reading starts
	// again from the committed places.
	m.reset([]string{"p"}, map[string][]changelog.Order{"p": {{Log: "a", At: [2]uint64{1, 10}, N: 1}}})
	if m.copyOf(change("p", "a", 11)) {
		t.Error("after a reset, a change read before and not committed is taken for a copy")
	}
	if !m.copyOf(change("q", "a", 5)) {
		t.Error("a reset of p forgot partition q's places")
	}
	// A snapshot of connector mysql:srv starts its logs anew, whatever
	// their server_id: what follows is applied, however low its places.
	m.reset(nil, map[string][]changelog.Order{"p": {{Log: "mysql:srv:1", At: [2]uint64{345, 9000}}, {Log: "mysql:srvx:1", At: [2]uint64{9, 9}}}})
	if m.copyOf(&changelog.Change{Pos: changelog.Position{Partition: "p"}, Order: &changelog.Order{Log: "mysql:srv", Restart: true}}) {
		t.Error("a snapshot's record taken for a copy")
	}
	if m.copyOf(change("p", "mysql:srv:1", 100)) {
		t.Error("after a snapshot, a change of the log started anew is taken for a copy")
	}
	if !m.copyOf(change("p", "mysql:srvx:1", 5)) {
		t.Error("a snapshot of mysql:srv forgot the places of mysql:srvx")
	}
	restarted := mergeOrders([]changelog.Order{{Log: "mysql:srv:1", At: [2]uint64{345, 9000}}, {Log: "postgresql:shop", At: [2]uint64{7, 7}}}, "p",
		[]commit.Order{{Partition: "p", Order: changelog.Order{Log: "mysql:srv", Restart: true}}, {Partition: "p", Order: changelog.Order{Log: "mysql:srv:1", At: [2]uint64{1, 100}}}})
	if want := []changelog.Order{{Log: "postgresql:shop", At: [2]uint64{7, 7}}, {Log: "mysql:srv:1", At: [2]uint64{1, 100}}}; !reflect.DeepEqual(restarted, want) {
		t.Errorf("mergeOrders after a new start = %+v, want %+v", restarted, want)
	}
	merged := mergeOrders([]changelog.Order{{Log: "a", At: [2]uint64{1, 10}}}, "p",
		[]commit.Order{{Partition: "p", Order: changelog.Order{Log: "a", At: [2]uint64{1, 12}}}, {Partition: "q", Order: changelog.Order{Log: "z"}},
			{Partition: "p", Order: changelog.Order{Log: "b", At: [2]uint64{2, 1}}}})
	if want := []changelog.Order{{Log: "a", At: [2]uint64{1, 12}}, {Log: "b", At: [2]uint64{2, 1}}}; !reflect.DeepEqual(merged, want) {
		t.Errorf("mergeOrders = %+v, want %+v", merged, want)
	}
}

// TestStreamedPartsOrders checks that a plan's unit into a target that
// streams carries the places of the parts loaded ahead of it, before its
// own, as it carries their progress: without them a copy of what a part
// held would be applied after a restart.
func TestStreamedPartsOrders(t *testing.T) {
	a := commit.Order{Partition: "p", Order: changelog.Order{Log: "mysql:srv:1", At: [2]uint64{3, 100}}}
	b := commit.Order{Partition: "p", Order: changelog.Order{Log: "mysql:srv:1", At: [2]uint64{3, 200}}}
	l := &txnLoop{e: &Engine{cfg: &config.Config{Name: "x"}}}
	at := [][]changelog.Position{{{Partition: "p", Offset: 1}}}
	for _, tt := range []struct {
		name string
		u    *commit.Unit
		want []commit.Order
	}{
		{"merged chunks after the part", &commit.Unit{Pipeline: "x", Orders: []commit.Order{b}}, []commit.Order{a, b}},
		{"the part alone", nil, []commit.Order{a}},
	} {
		u := l.withParts(tt.u, []*commit.Unit{{Pipeline: "x", Orders: []commit.Order{a}}}, at)
		if !reflect.DeepEqual(u.Orders, tt.want) {
			t.Errorf("%s: Orders = %+v, want %+v", tt.name, u.Orders, tt.want)
		}
		if got := mergeOrders(nil, "p", u.Orders); !reflect.DeepEqual(got, []changelog.Order{tt.want[len(tt.want)-1].Order}) {
			t.Errorf("%s: stored %+v, want the latest place", tt.name, got)
		}
	}
}
