package reduce

import (
	"errors"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
)

var trunc = changelog.Truncate

// describeTruncates is describe with each truncated batch's TRUNCATE in
// front of its rows.
func describeTruncates(u *commit.Unit) string {
	if u == nil {
		return "<nothing>"
	}
	var parts []string
	for _, b := range u.Batches {
		if b.Truncate {
			parts = append(parts, "TRUNCATE "+b.Table.Name)
		}
		one := &commit.Unit{Batches: []*commit.Batch{b}}
		if d := describe(one); d != "" {
			parts = append(parts, d)
		}
	}
	return strings.Join(parts, "; ")
}

// TestTruncate: a TRUNCATE drops every change of its table buffered
// before it, keeps the ones after it, and marks the table's batch, alike
// when the changes are added to one buffer and when each transaction is
// reduced on its own and merged in order (as transaction mode does): the
// mark of an earlier transaction stays in front of a later one's rows,
// and a later transaction's TRUNCATE drops the earlier ones' rows.
func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		name string
		txns [][]op
		want string
	}{
		{"rows, then a truncate",
			[][]op{{{kind: ins, part: "a", id: 1}, {kind: ins, part: "a", id: 2}}, {{kind: trunc, part: "a"}}},
			"TRUNCATE orders"},
		{"a truncate, then rows in its transaction",
			[][]op{{{kind: ins, part: "a", id: 1}, {kind: trunc, part: "a"}, {kind: ins, part: "a", id: 2}, {kind: del, part: "a", id: 3}}},
			"TRUNCATE orders; DELETE orders [3]; UPSERT orders [2 1.00 s2]"},
		{"a truncate, then rows in later transactions",
			[][]op{{{kind: ins, part: "a", id: 1}}, {{kind: trunc, part: "a"}}, {{kind: ins, part: "a", id: 1}}, {{kind: upd, part: "a", id: 1}}},
			"TRUNCATE orders; UPSERT orders [1 1.00 s3]"},
		{"two truncates",
			[][]op{{{kind: trunc, part: "a"}, {kind: ins, part: "a", id: 1}}, {{kind: ins, part: "a", id: 2}, {kind: trunc, part: "a"}, {kind: ins, part: "a", id: 3}}},
			"TRUNCATE orders; UPSERT orders [3 1.00 s4]"},
		{"only the truncated table's rows go",
			[][]op{{{events: true, kind: ins, part: "a", id: 7}, {kind: ins, part: "a", id: 1}}, {{kind: trunc, part: "a"}}},
			"INSERT events [7 x0]; TRUNCATE orders"},
		{"an append-only table",
			[][]op{{{events: true, kind: ins, part: "a", id: 7}}, {{events: true, kind: trunc, part: "a"}, {events: true, kind: ins, part: "a", id: 8}}},
			"TRUNCATE events; INSERT events [8 x2]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tabs := newTables(t)
			var all []op
			for _, txn := range tc.txns {
				all = append(all, txn...)
			}
			one := NewBuffer("p")
			if i, err := play(t, one, tabs, all); err != nil {
				t.Fatalf("op %d: %v", i, err)
			}
			rows, bytes := one.Rows(), one.Bytes()
			if got := describeTruncates(one.Take()); got != tc.want {
				t.Errorf("one buffer:\ngot  %s\nwant %s", got, tc.want)
			}

			merged := NewBuffer("p")
			done := 0
			for _, txn := range tc.txns {
				// Each transaction in a buffer of its own, its
				// positions where one buffer had them.
				part := NewBuffer("p")
				if i, err := playFrom(t, part, tabs, all, done, done+len(txn)); err != nil {
					t.Fatalf("op %d: %v", i, err)
				}
				done += len(txn)
				if err := merged.Merge(part); err != nil {
					t.Fatal(err)
				}
			}
			if merged.Rows() != rows || merged.Bytes() != bytes {
				t.Errorf("merged buffer holds %d rows, %d bytes; one buffer %d, %d", merged.Rows(), merged.Bytes(), rows, bytes)
			}
			if got := describeTruncates(merged.Take()); got != tc.want {
				t.Errorf("merged:\ngot  %s\nwant %s", got, tc.want)
			}
			// The mark is the unit's: the next one truncates nothing.
			if _, err := playFrom(t, merged, tabs, []op{{kind: ins, part: "a", id: 9}}, 0, 1); err != nil {
				t.Fatal(err)
			}
			if got := describeTruncates(merged.Take()); strings.Contains(got, "TRUNCATE") {
				t.Errorf("the unit after a truncated one: %s", got)
			}
		})
	}
}

// TestTruncateRules: a TRUNCATE of a table whose rules a delete of every
// row cannot honour (a version column, a soft delete) is refused, by
// Check and by Add, naming the table, the rule and what to do, and the
// buffer is left as it was; under delete: ignore it is one more ignored
// delete and the rows stay.
func TestTruncateRules(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rules  commit.Rules
		ignore bool
		want   string // the refusal, "" when taken
		unit   string
	}{
		{"version column", commit.Rules{Version: "v"}, false, "p0:2: table r: a TRUNCATE reached a table with version-column v", ""},
		{"soft delete", commit.Rules{SoftDelete: "gone"}, false, "a TRUNCATE reached a table with delete: soft (column gone)", ""},
		{"ignored deletes", commit.Rules{}, true, "", "UPSERT r [1 1 a false]; PROGRESS p0:2"},
		{"no rules", commit.Rules{}, false, "", "TRUNCATE r; PROGRESS p0:2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl := rulesTable(t)
			if err := tbl.SetRules(tc.rules, tc.ignore); err != nil {
				t.Fatal(err)
			}
			b := NewBuffer("p")
			pos := func(seq int64) changelog.Position {
				return changelog.Position{Partition: "p0", Offset: seq * 10, Seq: seq}
			}
			insert := &changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Name: "r"}, Pos: pos(1),
				After: row("id", changelog.Number("1"), "v", changelog.Number("1"), "name", "a", "gone", false)}
			if err := b.Add(tbl, insert, t0); err != nil {
				t.Fatal(err)
			}
			tr := &changelog.Change{Kind: changelog.Truncate, Table: changelog.Table{Name: "r"}, Pos: pos(2)}
			checkRefusal(t, b.Check(tbl, tr), tc.want)
			err := b.Add(tbl, tr, t0)
			checkRefusal(t, err, tc.want)
			if err != nil {
				var re *Error
				if !errors.As(err, &re) || re.Hint == "" {
					t.Errorf("refusal %#v: want a *reduce.Error with a hint", err)
				}
				if b.Rows() != 1 || b.Changes() != 1 {
					t.Errorf("after the refusal the buffer holds %d rows of %d changes, want the insert alone", b.Rows(), b.Changes())
				}
				return
			}
			u := b.Take()
			if got := describeTruncates(u) + "; PROGRESS " + u.Progress[0].String(); got != tc.unit {
				t.Errorf("unit %s, want %s", got, tc.unit)
			}
			if tc.ignore && u.IgnoredDeletes != 1 {
				t.Errorf("IgnoredDeletes = %d, want the TRUNCATE counted", u.IgnoredDeletes)
			}
		})
	}
}
