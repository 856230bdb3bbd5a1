package reduce

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/schema"
)

// wideTable is a table of four columns, for images that carry some of them.
func wideTable(t testing.TB) *Table {
	t.Helper()
	st := &schema.Table{Name: "w", PrimaryKey: []string{"id"}, Columns: []schema.Column{
		{Name: "id", Class: schema.Int, Bits: 64},
		{Name: "a", Class: schema.String, Nullable: true},
		{Name: "b", Class: schema.String, Nullable: true},
		{Name: "c", Class: schema.Int, Bits: 64, Nullable: true},
	}}
	rt, err := NewTable(st, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// wch builds a change of table w in partition p0 at line seq; kv are the
// image's columns after id.
func wch(kind changelog.Kind, id int, seq int64, kv ...any) changelog.Change {
	img := row(append([]any{"id", changelog.Number(itoa(id))}, kv...)...)
	c := changelog.Change{Kind: kind, Table: changelog.Table{Name: "w"}, Pos: changelog.Position{Partition: "p0", Offset: seq * 10, Seq: seq}, Size: 40}
	if kind.Upserts() {
		c.After = img
	} else {
		c.Before = img
	}
	return c
}

func itoa(i int) string { return strconv.Itoa(i) }

// describeGroups renders a unit's upsert groups with their columns and
// whether they are partial.
func describeGroups(t *testing.T, b *Buffer) string {
	t.Helper()
	u := b.Take()
	if u == nil {
		return "<nothing>"
	}
	var parts []string
	for _, bt := range u.Batches {
		for _, k := range bt.Deletes {
			parts = append(parts, "DELETE "+RenderKey(k))
		}
		for _, g := range bt.Upserts {
			tag := "UPSERT"
			if g.Partial {
				tag = "PARTIAL"
			}
			for _, r := range g.Rows {
				parts = append(parts, tag+" "+strings.Join(g.Columns, ",")+" "+RenderKey(r))
			}
		}
	}
	for _, p := range u.Progress {
		parts = append(parts, "PROGRESS "+p.String())
	}
	return strings.Join(parts, "; ")
}

func TestPartialImagesMerge(t *testing.T) {
	I, U, D := changelog.Insert, changelog.UpdateAfter, changelog.Delete
	tests := []struct {
		name    string
		changes []changelog.Change
		want    string
		wantErr string
	}{
		{"a partial update keeps the insert's other columns",
			[]changelog.Change{wch(I, 1, 1, "a", "x", "b", "y", "c", changelog.Number("7")), wch(U, 1, 2, "a", "z")},
			`UPSERT id,a,b,c (1, "z", "y", 7); PROGRESS p0:2`, ""},
		{"two partial updates keep both",
			[]changelog.Change{wch(U, 1, 1, "a", "p"), wch(U, 1, 2, "b", "q")},
			`PARTIAL id,a,b (1, "p", "q"); PROGRESS p0:2`, ""},
		{"a later value of one column wins",
			[]changelog.Change{wch(U, 1, 1, "a", "p", "c", changelog.Number("1")), wch(U, 1, 2, "c", changelog.Number("2")), wch(U, 1, 3, "a", "r")},
			`PARTIAL id,a,c (1, "r", 2); PROGRESS p0:3`, ""},
		{"a full update replaces a partial one",
			[]changelog.Change{wch(U, 1, 1, "a", "p"), wch(U, 1, 2, "a", "x", "b", "y", "c", changelog.Number("7"))},
			`UPSERT id,a,b,c (1, "x", "y", 7); PROGRESS p0:2`, ""},
		{"an insert that lacks columns is not partial",
			[]changelog.Change{wch(I, 1, 1, "a", "p")},
			`UPSERT id,a (1, "p"); PROGRESS p0:1`, ""},
		{"a delete after a partial update deletes",
			[]changelog.Change{wch(U, 1, 1, "a", "p"), wch(D, 1, 2)},
			`DELETE (1); PROGRESS p0:2`, ""},
		{"a partial update after a delete has no values for its other columns",
			[]changelog.Change{wch(D, 1, 1), wch(U, 1, 2, "a", "p")},
			"", "an update's image without column b, c follows a delete of its key (at p0:1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tbl := wideTable(t)
			b := NewBuffer("p")
			var err error
			for i := range tt.changes {
				if err = b.Add(tbl, &tt.changes[i], t0); err != nil {
					break
				}
			}
			if tt.wantErr != "" {
				var re *Error
				if !errors.As(err, &re) || !strings.Contains(err.Error(), tt.wantErr) || re.Key != "(1)" {
					t.Fatalf("Add = %v, want an *Error for key (1) containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := describeGroups(t, b); got != tt.want {
				t.Errorf("unit\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestPartialImagesMergeAcrossTransactions merges per-transaction
// reductions, as transaction mode does: the same result as one buffer.
func TestPartialImagesMergeAcrossTransactions(t *testing.T) {
	tbl := wideTable(t)
	first, second, merged := NewBuffer("p"), NewBuffer("p"), NewBuffer("p")
	c1 := wch(changelog.Insert, 1, 1, "a", "x", "b", "y", "c", changelog.Number("7"))
	c2 := wch(changelog.UpdateAfter, 1, 2, "b", "q")
	if err := first.Add(tbl, &c1, t0); err != nil {
		t.Fatal(err)
	}
	if err := second.Add(tbl, &c2, t0); err != nil {
		t.Fatal(err)
	}
	for _, o := range []*Buffer{first, second} {
		if err := merged.Merge(o); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := describeGroups(t, merged), `UPSERT id,a,b,c (1, "x", "q", 7); PROGRESS p0:2`; got != want {
		t.Errorf("merged unit\n got %s\nwant %s", got, want)
	}
}

func TestRetractions(t *testing.T) {
	UB, UA, I := changelog.UpdateBefore, changelog.UpdateAfter, changelog.Insert
	full := func(kind changelog.Kind, id int, seq int64, a string) changelog.Change {
		return wch(kind, id, seq, "a", a, "b", "-", "c", changelog.Number("0"))
	}
	tests := []struct {
		name  string
		units [][]changelog.Change // Take after each
		want  []string
	}{
		{"-U then +U of the same key: an update, no gap",
			[][]changelog.Change{{full(I, 1, 1, "x"), full(UB, 1, 2, "x"), full(UA, 1, 3, "y")}},
			[]string{`UPSERT id,a,b,c (1, "y", "-", 0); PROGRESS p0:3`}},
		{"-U then +U of another key: the old key is deleted in the new one's unit",
			[][]changelog.Change{{full(I, 1, 1, "x"), full(UB, 1, 2, "x"), full(UA, 2, 3, "x")}},
			[]string{`DELETE (1); UPSERT id,a,b,c (2, "x", "-", 0); PROGRESS p0:3`}},
		{"a commit between -U and +U holds progress before the -U",
			[][]changelog.Change{{full(I, 1, 1, "x"), full(UB, 1, 2, "x")}, {full(UA, 2, 3, "x")}},
			[]string{`UPSERT id,a,b,c (1, "x", "-", 0); PROGRESS p0:1`, `DELETE (1); UPSERT id,a,b,c (2, "x", "-", 0); PROGRESS p0:3`}},
		{"a lone -U at a commit deletes nothing and is not committed past",
			[][]changelog.Change{{full(UB, 1, 1, "x")}},
			[]string{``}},
		{"a -U followed by another change is lone",
			[][]changelog.Change{{full(UB, 1, 1, "x"), full(I, 3, 2, "z"), full(UA, 2, 3, "x")}},
			[]string{`UPSERT id,a,b,c (3, "z", "-", 0); UPSERT id,a,b,c (2, "x", "-", 0); PROGRESS p0:3`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tbl := wideTable(t)
			b := NewBuffer("p")
			for i, unit := range tt.units {
				for j := range unit {
					if err := b.Add(tbl, &unit[j], t0); err != nil {
						t.Fatal(err)
					}
				}
				if got := describeGroups(t, b); got != tt.want[i] {
					t.Errorf("unit %d\n got %s\nwant %s", i+1, got, tt.want[i])
				}
			}
		})
	}
}

// TestPartialKeyMoves moves a row to another key with a partial image: the
// columns it lacks come from the row the buffer holds, and are refused when
// only the target holds it.
func TestPartialKeyMoves(t *testing.T) {
	tbl := wideTable(t)
	b := NewBuffer("p")
	c1 := wch(changelog.Insert, 1, 1, "a", "x", "b", "y", "c", changelog.Number("7"))
	move := wch(changelog.UpdateAfter, 2, 2, "a", "z")
	move.Before = row("id", changelog.Number("1"))
	for _, c := range []*changelog.Change{&c1, &move} {
		if err := b.Add(tbl, c, t0); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := describeGroups(t, b), `DELETE (1); UPSERT id,a,b,c (2, "z", "y", 7); PROGRESS p0:2`; got != want {
		t.Errorf("a move of a buffered row\n got %s\nwant %s", got, want)
	}
	// Row 2 is in the target now, not in the buffer.
	again := wch(changelog.UpdateAfter, 3, 3, "b", "q")
	again.Before = row("id", changelog.Number("2"))
	err := b.Add(tbl, &again, t0)
	if err == nil || !strings.Contains(err.Error(), "an update moves key (2) to (3) with an image without column a, c") {
		t.Fatalf("a partial move of a stored row: %v, want the refusal", err)
	}
	if !b.Empty() {
		t.Error("the refused move left something in the buffer")
	}
}
