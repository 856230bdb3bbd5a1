package workload

import (
	"reflect"
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
