package txn

import (
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
)

func TestDrop(t *testing.T) {
	m, err := newKeeping(Config{CommitInterval: time.Hour, MiniSwitchInterval: time.Hour, BufferSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	seq := map[string]int64{}
	step := func(part, txn string, kind changelog.Kind, end bool) {
		t.Helper()
		seq[part]++
		c := changelog.Change{Kind: kind, Table: changelog.Table{Name: "t_" + part},
			Pos: changelog.Position{Partition: part, Offset: seq[part], Seq: seq[part]}, TxnID: txn, TxnEnd: end, Size: 10}
		if err := stepKeeping(m, c, t0); err != nil {
			t.Fatal(err)
		}
	}
	// a: a frozen transaction (the first end switches), a finished one
	// not frozen, and an open one; b: one finished transaction, an update,
	// which is 2 changes but 1 row for CommitRows.
	step("a", "a1", changelog.UpdateBefore, false)
	step("a", "a1", changelog.UpdateAfter, true)
	step("a", "a2", changelog.Insert, false)
	step("a", "a2", changelog.EndTxn, true)
	step("a", "a3", changelog.Insert, false)
	step("b", "b1", changelog.UpdateBefore, false)
	step("b", "b1", changelog.UpdateAfter, true)
	if got := m.Drop("a"); got != 5 {
		t.Fatalf("Drop(a) = %d changes, want 5", got)
	}
	if m.doneRows != 1 || m.doneBytes != 20 {
		t.Fatalf("after Drop(a): %d finished rows (%d bytes) counted, want b's 1 (20)", m.doneRows, m.doneBytes)
	}
	if m.Bytes() != 20 || m.OpenTxns() != 0 {
		t.Fatalf("after Drop(a): %d bytes, %d open, want 20 and 0:\n%s", m.Bytes(), m.OpenTxns(), m.Describe())
	}
	if m.byName["a"] != nil || len(m.parts) != 1 {
		t.Errorf("the dropped partition is left: %s", m.Describe())
	}
	plan := m.Ready(t0, true)
	if plan == nil || plan.Changes != 2 || len(plan.Chunks) != 1 || plan.Chunks[0].Last.Partition != "b" || len(plan.Chunks[0].Value) != 2 || m.doneRows != 0 {
		t.Fatalf("plan after Drop(a): %s", plan.Describe())
	}
	defer func() {
		if recover() == nil {
			t.Error("Drop of a partition in the plan in flight did not panic")
		}
	}()
	m.Drop("b")
}

func TestDropUnknownPartition(t *testing.T) {
	m, _ := New[struct{}](DefaultConfig())
	if got := m.Drop("nope"); got != 0 {
		t.Fatalf("Drop of an unknown partition = %d", got)
	}
}
