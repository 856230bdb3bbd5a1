package reduce

import (
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/schema"
)

// historyTables returns an upsert table u (id, val: at most 3
// characters) and a history table h of the same columns, NULL-able, with
// txsink's five.
func historyTables(t *testing.T) (u, h *Table) {
	t.Helper()
	cols := []schema.Column{{Name: "id", Class: schema.Int, Bits: 64}, {Name: "val", Class: schema.String, Length: 3}}
	u, err := NewTable(&schema.Table{Name: "u", PrimaryKey: []string{"id"}, Columns: cols}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	hc := []schema.Column{{Name: "id", Class: schema.Int, Bits: 64, Nullable: true}, {Name: "val", Class: schema.String, Length: 2, Nullable: true},
		{Name: OpColumn, Class: schema.String}, {Name: PartitionColumn, Class: schema.String},
		{Name: OffsetColumn, Class: schema.Int, Bits: 64}, {Name: TxnColumn, Class: schema.String, Nullable: true},
		{Name: ReadAtColumn, Class: schema.Timestamp, FracDigits: 3}}
	h, err = NewHistoryTable(&schema.Table{Name: "h", Columns: hc})
	if err != nil {
		t.Fatal(err)
	}
	return u, h
}

// TestFanAllOrNothing adds changes through a fan of an upsert and a
// history table: every change is a history row, in order, the upsert
// table reduced; a change either table refuses is in neither; a -U
// makes no history row.
func TestFanAllOrNothing(t *testing.T) {
	u, h := historyTables(t)
	f := Fan(u, h)
	b := NewBuffer("p")
	now := time.Date(2026, 12, 4, 1, 2, 3, 456789000, time.UTC)
	seq := int64(0)
	add := func(kind changelog.Kind, before, after changelog.Row) error {
		seq++
		return b.Add(f, &changelog.Change{Kind: kind, Table: changelog.Table{Name: "s"}, Before: before, After: after, TxnID: "t",
			Pos: changelog.Position{Partition: "p0", Offset: seq * 10, Seq: seq}}, now)
	}
	r := changelog.RowOf
	for _, err := range []error{
		add(changelog.Insert, changelog.Row{}, r("id", int64(1), "val", "a")),
		add(changelog.UpdateBefore, r("id", int64(1), "val", "a"), changelog.Row{}),
		add(changelog.UpdateAfter, changelog.Row{}, r("id", int64(1), "val", "b")),
		add(changelog.Delete, r("id", int64(1)), changelog.Row{}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	// "abc" fits u but not h: refused for both.
	if err := add(changelog.Insert, changelog.Row{}, r("id", int64(2), "val", "abc")); err == nil || !strings.Contains(err.Error(), "table h") {
		t.Errorf("a value h cannot hold: %v, want it refused naming h", err)
	}
	// "abcd" fits neither: refused, for u, with h unchanged.
	if err := add(changelog.Insert, changelog.Row{}, r("id", int64(3), "val", "abcd")); err == nil {
		t.Error("a value neither table holds was taken")
	}
	if err := b.Check(f, &changelog.Change{Kind: changelog.Insert, After: r("id", int64(4), OpColumn, "x")}); err == nil || !strings.Contains(err.Error(), "fills itself") {
		t.Errorf("a source column %s: %v, want it refused", OpColumn, err)
	}
	unit := b.Take()
	if unit.Changes != 4 {
		t.Errorf("unit.Changes = %d, want 4", unit.Changes)
	}
	var hist, up string
	for _, batch := range unit.Batches {
		switch batch.Table.Name {
		case "h":
			for _, g := range batch.Inserts {
				for _, row := range g.Rows {
					hist += renderRow(g.Columns, row) + "\n"
				}
			}
		case "u":
			up = strings.Repeat("D", len(batch.Deletes)) + strings.Repeat("U", len(batch.Upserts))
		}
	}
	want := "id=1 val=a __op=I __source_partition=p0 __source_offset=10 __txn_id=t __read_at=2026-12-04T01:02:03.456Z\n" +
		"id=1 val=b __op=U __source_partition=p0 __source_offset=30 __txn_id=t __read_at=2026-12-04T01:02:03.456Z\n" +
		"id=1 __op=D __source_partition=p0 __source_offset=40 __txn_id=t __read_at=2026-12-04T01:02:03.456Z\n"
	if hist != want {
		t.Errorf("history rows:\n%swant:\n%s", hist, want)
	}
	if up != "D" {
		t.Errorf("upsert table: %q, want key 1's delete alone", up)
	}
}

func renderRow(cols []string, row []any) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c + "=" + render(row[i])
	}
	return strings.Join(parts, " ")
}

// TestTruncateOfHistoryRefused: a TRUNCATE of a table history entries
// record is refused, by Check and by Add, and leaves the buffer as it was.
func TestTruncateOfHistoryRefused(t *testing.T) {
	u, h := historyTables(t)
	for name, tbl := range map[string]*Table{"fan": Fan(u, h), "history": h} {
		b := NewBuffer("p")
		c := &changelog.Change{Kind: changelog.Truncate, Table: changelog.Table{Name: "s"}, Pos: changelog.Position{Partition: "p0", Offset: 10, Seq: 1}}
		const want = "history entries (tables[].mode: history) record"
		if err := b.Check(tbl, c); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: Check = %v, want the refusal", name, err)
		}
		if err := b.Add(tbl, c, time.Now()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: Add = %v, want the refusal", name, err)
		}
		if !b.Empty() {
			t.Errorf("%s: the refused TRUNCATE left the buffer not empty", name)
		}
	}
}

// TestRoutedChangesNoteOrders checks that a change's place in its
// source's log (changelog.Change.Order) is the unit's whatever table it
// reached: a history table alone, a fan of an upsert and a history table,
// a TRUNCATE.
func TestRoutedChangesNoteOrders(t *testing.T) {
	u, h := historyTables(t)
	now := time.Unix(0, 0)
	r := changelog.RowOf
	for _, tc := range []struct {
		name string
		t    *Table
		kind changelog.Kind
	}{
		{"history table alone", h, changelog.Insert},
		{"fan", Fan(u, h), changelog.Insert},
		{"truncate", u, changelog.Truncate},
	} {
		b := NewBuffer("p")
		o := changelog.Order{Log: "mysql:srv:1", At: [2]uint64{3, 154}, N: 1}
		c := &changelog.Change{Kind: tc.kind, Table: changelog.Table{Name: "s"}, Order: &o,
			Pos: changelog.Position{Partition: "p0", Offset: 10, Seq: 1}}
		if tc.kind == changelog.Insert {
			c.After = r("id", int64(1), "val", "a")
		}
		if err := b.Add(tc.t, c, now); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		un := b.Take()
		if un == nil || len(un.Orders) != 1 || un.Orders[0].Partition != "p0" || un.Orders[0].Order != o {
			t.Errorf("%s: unit's orders = %+v, want p0's %+v", tc.name, un, o)
		}
	}
}
