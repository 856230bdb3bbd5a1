package reduce

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
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

// TestTruncateProperty plays random changelogs of a keyed and an
// append-only table with TRUNCATEs among their changes, cut into
// transactions and units at random, two ways: every change added to one
// buffer, and each transaction reduced in a buffer of its own and merged
// into the unit's (as transaction mode does). Each unit is applied to a
// model target as a target applies it (a truncated batch's table emptied
// first, then its deletes, upserts and inserts); both ways end where
// replaying the changelog in order ends.
func TestTruncateProperty(t *testing.T) {
	tabs := newTables(t)
	for seed := uint64(0); seed < 500; seed++ {
		rng := rand.New(rand.NewPCG(seed, 29))
		var ops []op
		var ends []bool // ends[i]: a transaction ends after ops[i]
		var takes []bool
		for range 5 + rng.IntN(40) {
			o := op{part: "a", id: 1 + rng.IntN(6)}
			switch rng.IntN(8) {
			case 0, 1:
				o.kind = ins
			case 2:
				o.kind = upd
			case 3:
				o.kind = del
			case 4, 5:
				o.kind, o.events = ins, true
			case 6:
				o.kind = trunc
			case 7:
				o.kind, o.events = trunc, true
			}
			ops = append(ops, o)
			ends = append(ends, rng.IntN(3) == 0)
			takes = append(takes, rng.IntN(4) == 0)
		}
		ends[len(ends)-1], takes[len(takes)-1] = true, true

		// The replay: each key's last image, the events in order.
		want := newModel()
		for i, o := range ops {
			want.play(o, i)
		}

		one, byOne := NewBuffer("p"), newModel()
		merged, byMerge := NewBuffer("p"), newModel()
		txn, from := NewBuffer("p"), 0
		for i := range ops {
			if _, err := playFrom(t, one, tabs, ops, i, i+1); err != nil {
				t.Fatal(err)
			}
			if ends[i] {
				if _, err := playFrom(t, txn, tabs, ops, from, i+1); err != nil {
					t.Fatal(err)
				}
				if err := merged.Merge(txn); err != nil {
					t.Fatal(err)
				}
				from = i + 1
				if takes[i] {
					byMerge.apply(merged.Take())
				}
			}
			if takes[i] {
				byOne.apply(one.Take())
			}
		}
		if got := byOne.String(); got != want.String() {
			t.Fatalf("seed %d, one buffer:\ngot  %s\nwant %s", seed, got, want)
		}
		if got := byMerge.String(); got != want.String() {
			t.Fatalf("seed %d, merged transactions:\ngot  %s\nwant %s", seed, got, want)
		}
	}
}

// model is a target of the tables orders (status by id) and events.
type model struct {
	orders map[int64]string
	events []string
}

func newModel() *model { return &model{orders: map[int64]string{}} }

// play applies op i as the source did (see playFrom for its values).
func (m *model) play(o op, i int) {
	switch {
	case o.kind == trunc && o.events:
		m.events = nil
	case o.kind == trunc:
		clear(m.orders)
	case o.events:
		m.events = append(m.events, fmt.Sprint(o.id, " x", i))
	case o.kind == del:
		delete(m.orders, int64(o.id))
	default:
		m.orders[int64(o.id)] = fmt.Sprint("s", i)
	}
}

// apply applies a unit as a target does.
func (m *model) apply(u *commit.Unit) {
	if u == nil {
		return
	}
	for _, b := range u.Batches {
		events := b.Table.Name == "events"
		if b.Truncate && events {
			m.events = nil
		} else if b.Truncate {
			clear(m.orders)
		}
		for _, k := range b.Deletes {
			delete(m.orders, k[0].(int64))
		}
		for _, g := range b.Upserts {
			for _, r := range g.Rows {
				m.orders[r[0].(int64)] = r[2].(string)
			}
		}
		for _, g := range b.Inserts {
			for _, r := range g.Rows {
				m.events = append(m.events, fmt.Sprint(r[0], " ", r[1]))
			}
		}
	}
}

func (m *model) String() string {
	keys := slices.Sorted(maps.Keys(m.orders))
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%d=%s ", k, m.orders[k])
	}
	return b.String() + "| " + strings.Join(m.events, ", ")
}
