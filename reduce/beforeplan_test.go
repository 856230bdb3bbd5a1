package reduce

import (
	"testing"

	"github.com/txsink/txsink/changelog"
)

// TestBeforePlanCache: movedFrom finds a before image's plan through the
// after image's plan (plan.before) when its names are the ones seen last,
// and through planFor when they are not: before images whose column lists
// alternate, or one names slice reused with its names reordered, still
// tell a moved key from a kept one.
func TestBeforePlanCache(t *testing.T) {
	tbl := ordersTable(t)
	buf := NewBuffer("before")
	reused := []string{"id", "status"}
	seq := int64(0)
	for _, tc := range []struct {
		before changelog.Row
		moved  bool
	}{
		{row("id", changelog.Number("1")), false},
		{row("id", changelog.Number("9")), true},
		{row("status", "x", "id", changelog.Number("1")), false},
		{row("status", "x", "id", changelog.Number("8")), true},
		{row("id", changelog.Number("1")), false},
		{changelog.Row{Names: reused, Values: []changelog.Value{changelog.Number("1"), "x"}}, false},
		{changelog.Row{Names: reused, Values: []changelog.Value{changelog.Number("7"), "x"}}, true},
		{changelog.Row{Names: reused, Values: []changelog.Value{"x", changelog.Number("1")}}, false}, // reordered below
		{changelog.Row{Names: []string{"status"}, Values: []changelog.Value{"x"}}, false},
	} {
		seq++
		if seq == 8 {
			reused[0], reused[1] = "status", "id"
		}
		c := changelog.Change{Kind: changelog.UpdateAfter, Table: changelog.Table{Name: "orders"}, Pos: changelog.Position{Partition: "p0", Seq: seq},
			Before: tc.before, After: row("id", changelog.Number("1"), "amount", changelog.Number("2.00"), "status", "A")}
		if err := buf.Add(tbl, &c, t0); err != nil {
			t.Fatalf("change %d: %v", seq, err)
		}
		u := buf.Take()
		if got := len(u.Batches[0].Deletes) == 1; got != tc.moved {
			t.Errorf("change %d (before %v): moved %v, want %v", seq, tc.before, got, tc.moved)
		}
	}
}
