package workload

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
)

// TestStreamIsGenerate checks that Stream emits exactly the changes
// Generate returns, positions included, whole transactions at a time, and
// that both digests are the digest of Generate's final state.
func TestStreamIsGenerate(t *testing.T) {
	spec := Spec{Orders: 500, Partitions: 3, Seed: 9, Events: true}
	want := Generate(spec)
	got := make([][]changelog.Change, spec.Partitions)
	var told []int
	res, err := Stream(spec, func(p int, txn []changelog.Change) error {
		if !txn[len(txn)-1].TxnEnd {
			t.Errorf("partition %d: a transaction of %d changes without its end mark", p, len(txn))
		}
		got[p] = append(got[p], txn...)
		return nil
	}, func(n int) { told = append(told, n) })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want.Partitions) {
		t.Error("Stream's changes differ from Generate's")
	}
	if res.Final != nil || res.Partitions != nil {
		t.Error("Stream kept the final state or the changes")
	}
	if d := DigestOf(want.Final); !reflect.DeepEqual(res.Digest, d) || !reflect.DeepEqual(want.Digest, d) {
		t.Errorf("digests: Stream %v, Generate %v, of Generate's final state %v", res.Digest, want.Digest, d)
	}
	if res.Events != want.Events || res.Txns != want.Txns {
		t.Errorf("Stream counts %d events, %d txns; Generate %d, %d", res.Events, res.Txns, want.Events, want.Txns)
	}
	if len(told) != 0 {
		t.Errorf("progress told %v for 500 orders, want nothing before the 1000th", told)
	}
}

// TestLinked checks the linked workloads: their orders and items are those
// of the same workload without notes, they have notes, and every source
// transaction leaves a state that LinkedSchema's foreign keys accept (no
// item without its order, no note without its item), checked after each
// transaction as a server checks them at its end.
func TestLinked(t *testing.T) {
	spec := Spec{Orders: 400, Partitions: 3, Seed: 4}
	plain := Generate(spec)
	spec.Linked = true
	linked := Generate(spec)
	for _, table := range []string{"orders", "order_items"} {
		if !reflect.DeepEqual(plain.Final[table], linked.Final[table]) {
			t.Errorf("%s: the linked workload's final rows differ from the plain one's", table)
		}
	}
	if len(linked.Final["item_notes"]) == 0 {
		t.Fatal("the linked workload has no notes")
	}
	if d := DigestOf(linked.Final); !reflect.DeepEqual(linked.Digest, d) {
		t.Errorf("digest %v, of the final state %v", linked.Digest, d)
	}
	for p, changes := range linked.Partitions {
		checkLinks(t, fmt.Sprintf("Generate partition %d", p), changes)
	}

	var streamed []changelog.Change
	stats, err := InsertOnly(500, 1, 4, true, func(p int, txn []changelog.Change) error {
		streamed = append(streamed, txn...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	plainStats, err := InsertOnly(500, 1, 4, false, func(int, []changelog.Change) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"orders", "order_items"} {
		if stats.Final[table] != plainStats.Final[table] {
			t.Errorf("InsertOnly %s: linked digest %v, plain %v", table, stats.Final[table], plainStats.Final[table])
		}
	}
	if stats.Final["item_notes"].Rows == 0 {
		t.Error("InsertOnly linked made no notes")
	}
	checkLinks(t, "InsertOnly", streamed)
}

// checkLinks applies changes, one partition's (an order's changes all
// go to one), to a set of live keys and fails when a transaction's end
// leaves a child without its parent.
func checkLinks(t *testing.T, what string, changes []changelog.Change) {
	t.Helper()
	keyOf := map[string][]string{"orders": {"id"}, "order_items": {"order_id", "line_no"}, "item_notes": {"order_id", "line_no", "note_no"}}
	parentOf := map[string]string{"order_items": "orders", "item_notes": "order_items"}
	live := map[string]map[string]bool{"orders": {}, "order_items": {}, "item_notes": {}}
	key := func(table string, r changelog.Row, n int) string {
		var parts []string
		for _, c := range keyOf[table][:n] {
			v, _ := r.Get(c)
			parts = append(parts, Render(v))
		}
		return strings.Join(parts, "|")
	}
	for i, c := range changes {
		tb := c.Table.Name
		switch c.Kind {
		case changelog.Insert, changelog.UpdateAfter:
			live[tb][key(tb, c.After, len(keyOf[tb]))] = true
		case changelog.Delete:
			delete(live[tb], key(tb, c.Before, len(keyOf[tb])))
		}
		if !c.TxnEnd {
			continue
		}
		for child, parent := range parentOf {
			for k := range live[child] {
				n := len(keyOf[parent])
				if pk := strings.Join(strings.Split(k, "|")[:n], "|"); !live[parent][pk] {
					t.Fatalf("%s: after change %d (transaction %s) %s %s has no %s %s", what, i, c.TxnID, child, k, parent, pk)
				}
			}
		}
	}
}
