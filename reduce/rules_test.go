package reduce

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/schema"
)

// rulesTable is a table with a column of every class SetRules weighs.
func rulesTable(t *testing.T) *Table {
	t.Helper()
	st := &schema.Table{Name: "r", PrimaryKey: []string{"id"}, Columns: []schema.Column{
		{Name: "id", Class: schema.Int, Bits: 64},
		{Name: "v", Class: schema.Int, Bits: 64},
		{Name: "name", Class: schema.String, Nullable: true},
		{Name: "at", Class: schema.Timestamp, FracDigits: 3, Nullable: true},
		{Name: "at_nn", Class: schema.Timestamp, FracDigits: 3},
		{Name: "gone", Class: schema.Bool},
		{Name: "g", Class: schema.Int, Bits: 64, Generated: true, Nullable: true},
	}}
	rt, err := NewTable(st, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// TestSetRulesRefuses names the column and why for each rule a table
// cannot take.
func TestSetRulesRefuses(t *testing.T) {
	tests := []struct {
		name   string
		rules  commit.Rules
		ignore bool
		want   string // "" accepts
	}{
		{"integer version, bool soft", commit.Rules{Version: "V", SoftDelete: "gone"}, false, ""},
		{"timestamp version, timestamp soft", commit.Rules{Version: "at_nn", SoftDelete: "at"}, false, ""},
		{"ignore", commit.Rules{Version: "v"}, true, ""},
		{"missing column", commit.Rules{Version: "nope"}, false, "version-column names column nope, which the table does not have"},
		{"key column", commit.Rules{Version: "id"}, false, "names key column id"},
		{"generated column", commit.Rules{SoftDelete: "g"}, false, "names generated column g"},
		{"string version", commit.Rules{Version: "name"}, false, "version-column name is of type string"},
		{"string soft", commit.Rules{SoftDelete: "name"}, false, "soft-delete column name is of type string"},
		{"not null timestamp soft", commit.Rules{SoftDelete: "at_nn"}, false, "at_nn is NOT NULL"},
		{"one column both", commit.Rules{Version: "at", SoftDelete: "at"}, false, "both the version column and the soft-delete column"},
		{"soft and ignore", commit.Rules{SoftDelete: "gone"}, true, "both soft and ignored"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkRefusal(t, rulesTable(t).SetRules(tc.rules, tc.ignore), tc.want)
		})
	}
}

// checkRefusal fails unless err holds want, or is nil when want is "".
func checkRefusal(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("refused: %v", err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Errorf("err = %v, want it to contain %q", err, want)
	}
}

// TestRulesInUnits follows a key through a soft table with a version
// column, and an ignoring one, in the buffer and across Merge: what each
// unit's batch carries.
func TestRulesInUnits(t *testing.T) {
	now := time.Date(2026, 12, 3, 10, 0, 0, 987654321, time.UTC)
	img := func(id, v int, name string) changelog.Row {
		return row("id", changelog.Number(strconv.Itoa(id)), "v", changelog.Number(strconv.Itoa(v)), "name", name)
	}
	c := func(kind changelog.Kind, r changelog.Row, seq int64) *changelog.Change {
		ch := &changelog.Change{Kind: kind, Table: changelog.Table{Name: "r"}, Pos: changelog.Position{Partition: "p0", Offset: seq * 100, Seq: seq}, Size: 10}
		if kind.Upserts() {
			ch.After = r
		} else {
			ch.Before = r
		}
		return ch
	}
	soft := rulesTable(t)
	if err := soft.SetRules(commit.Rules{Version: "v", SoftDelete: "at"}, false); err != nil {
		t.Fatal(err)
	}
	b := NewBuffer("p")
	add := func(tbl *Table, ch *changelog.Change) {
		t.Helper()
		if err := b.Add(tbl, ch, now); err != nil {
			t.Fatal(err)
		}
	}
	add(soft, c(changelog.Insert, img(1, 1, "a"), 1))
	add(soft, c(changelog.Delete, img(1, 1, "a"), 2))                   // over its insert: the row, marked
	add(soft, c(changelog.Delete, img(2, 7, "b"), 3))                   // a stored row: a keyed soft delete at version 7
	add(soft, c(changelog.Delete, row("id", changelog.Number("3")), 4)) // no version: the position, 400
	add(soft, c(changelog.Insert, img(4, 2, "d"), 5))                   // an upsert carries at = NULL
	u := b.Take()
	got := describe(u)
	marked := now.Truncate(time.Millisecond)
	for _, want := range []string{"DELETE r [2]", "DELETE r [3]", "UPSERT r [1 1 a " + marked.String() + "]", "UPSERT r [4 2 d <nil>]"} {
		if !strings.Contains(got, want) {
			t.Errorf("unit %s lacks %s", got, want)
		}
	}
	bt := u.Batches[0]
	if bt.Rules.Version != "v" || bt.Rules.SoftDelete != "at" {
		t.Errorf("batch rules = %+v", bt.Rules)
	}
	if len(bt.DeleteVersions) != 2 || bt.DeleteVersions[0] != int64(7) || bt.DeleteVersions[1] != int64(400) {
		t.Errorf("delete versions = %#v, want 7 and the position 400", bt.DeleteVersions)
	}
	if len(bt.SoftValues) != 2 || bt.SoftValues[0] != marked {
		t.Errorf("soft values = %#v, want the delete's time cut to milliseconds", bt.SoftValues)
	}

	// Merged as transaction mode merges reduced transactions: a soft
	// delete over an insert of the other buffer is still the row, marked.
	ign := rulesTable(t)
	if err := ign.SetRules(commit.Rules{}, true); err != nil {
		t.Fatal(err)
	}
	other := NewBuffer("p")
	if err := b.Add(soft, c(changelog.Insert, img(5, 1, "e"), 6), now); err != nil {
		t.Fatal(err)
	}
	for i, ch := range []*changelog.Change{c(changelog.Delete, img(5, 1, "e"), 7), c(changelog.Delete, img(9, 1, "z"), 8)} {
		tbl := soft
		if i == 1 {
			tbl = ign
		}
		if err := other.Add(tbl, ch, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Merge(other); err != nil {
		t.Fatal(err)
	}
	u = b.Take()
	if got := describe(u); !strings.HasPrefix(got, "UPSERT r [5 1 e "+marked.String()+"]") || strings.Contains(got, "DELETE") {
		t.Errorf("merged unit = %s, want row 5 marked and nothing deleted", got)
	}
	if u.IgnoredDeletes != 1 {
		t.Errorf("IgnoredDeletes = %d, want 1", u.IgnoredDeletes)
	}
}

// TestRulesMovedKey: an update that moves a row to another key, as a
// -U/+U pair (no before image on the +U) or with its before image,
// deletes the old key at the update's version, on a table whose version
// column is a timestamp (no source position can stand in).
func TestRulesMovedKey(t *testing.T) {
	tbl := rulesTable(t)
	if err := tbl.SetRules(commit.Rules{Version: "at_nn"}, false); err != nil {
		t.Fatal(err)
	}
	img := func(id int, at string) changelog.Row {
		return row("id", changelog.Number(strconv.Itoa(id)), "v", changelog.Number("1"), "name", "n", "at", nil, "at_nn", at, "gone", false)
	}
	at := time.Date(2026, 12, 3, 11, 0, 0, 0, time.UTC)
	for _, paired := range []bool{true, false} {
		b := NewBuffer("p")
		pos := changelog.Position{Partition: "p0", Offset: 10, Seq: 1}
		upd := &changelog.Change{Kind: changelog.UpdateAfter, Table: changelog.Table{Name: "r"}, After: img(2, "2026-12-03 11:00:00"), Pos: pos, Size: 10}
		if paired {
			ret := &changelog.Change{Kind: changelog.UpdateBefore, Table: changelog.Table{Name: "r"}, Before: img(1, "2026-12-03 10:00:00"), Pos: pos, Size: 10}
			if err := b.Add(tbl, ret, t0); err != nil {
				t.Fatal(err)
			}
			upd.Pos.Seq, upd.Pos.Offset = 2, 20
		} else {
			upd.Before = img(1, "2026-12-03 10:00:00")
		}
		if err := b.Add(tbl, upd, t0); err != nil {
			t.Fatalf("paired %v: %v", paired, err)
		}
		u := b.Take()
		if len(u.Batches) != 1 || len(u.Batches[0].DeleteVersions) != 1 || u.Batches[0].DeleteVersions[0] != at {
			t.Errorf("paired %v: unit %s, delete versions %#v, want the old key deleted at %s", paired, describe(u), u.Batches[0].DeleteVersions, at)
		}
	}
}
