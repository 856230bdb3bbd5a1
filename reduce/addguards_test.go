package reduce

import (
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
)

// TestAddGuards: Add calls movedFrom only for an update with a before
// image, and versioned only for a table with a version column; the
// changes each must see still reach it. An update whose before image
// holds another key deletes that key, one without a before image or with
// the same key does not; an image lacking the version column of a
// guarded table is refused, in Add as in Check, and one with it is taken.
func TestAddGuards(t *testing.T) {
	upd := func(before changelog.Row, seq int64) changelog.Change {
		return changelog.Change{Kind: changelog.UpdateAfter, Table: changelog.Table{Name: "r"}, Pos: changelog.Position{Partition: "p0", Seq: seq},
			Before: before, After: row("id", changelog.Number("1"), "v", changelog.Number("5"), "name", "a", "at", nil, "at_nn", "2026-01-01 00:00:00", "gone", false)}
	}
	for _, tc := range []struct {
		name    string
		before  changelog.Row
		deletes int
	}{
		{"no before image", changelog.Row{}, 0},
		{"the same key", row("id", changelog.Number("1")), 0},
		{"the same key, written otherwise", row("id", "1"), 0},
		{"another key", row("id", changelog.Number("2")), 1},
		{"a before image without the key", row("name", "x"), 0},
	} {
		tbl := rulesTable(t)
		buf := NewBuffer("guards")
		c := upd(tc.before, 1)
		if err := buf.Add(tbl, &c, t0); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		u := buf.Take()
		if got := len(u.Batches[0].Deletes); got != tc.deletes {
			t.Errorf("%s: %d deletes, want %d", tc.name, got, tc.deletes)
		}
	}

	tbl := rulesTable(t)
	if err := tbl.SetRules(commit.Rules{Version: "v"}, false); err != nil {
		t.Fatal(err)
	}
	buf := NewBuffer("guards")
	lacking := changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Name: "r"}, Pos: changelog.Position{Partition: "p0", Seq: 2},
		After: row("id", changelog.Number("3"), "name", "a", "at", nil, "at_nn", "2026-01-01 00:00:00", "gone", false)}
	addErr, checkErr := buf.Add(tbl, &lacking, t0), buf.Check(tbl, &lacking)
	if addErr == nil || checkErr == nil || addErr.Error() != checkErr.Error() || !strings.Contains(addErr.Error(), "lacks version column v") {
		t.Errorf("an image without the version column: Add %v, Check %v", addErr, checkErr)
	}
	c := upd(row("id", changelog.Number("2"), "v", changelog.Number("4")), 3)
	if err := buf.Add(tbl, &c, t0); err != nil {
		t.Errorf("an image with the version column: %v", err)
	}
	if u := buf.Take(); len(u.Batches) != 1 || len(u.Batches[0].Deletes) != 1 || len(u.Batches[0].Upserts) != 1 {
		t.Errorf("the guarded update: %+v", u.Batches)
	}
}
