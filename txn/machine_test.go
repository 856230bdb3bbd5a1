package txn

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
)

func TestErrorsAreTyped(t *testing.T) {
	m, err := New[struct{}](Config{CommitInterval: time.Second, BufferSize: 1000, MaxTxnBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	pos := changelog.Position{Partition: "p0", Offset: 7, Seq: 7}
	err = m.Step(changelog.Change{Pos: pos, TxnID: "t1", Size: 101}, t0)
	var te *Error
	if !errors.As(err, &te) || !errors.Is(err, ErrMaxTxnBytes) || te.Partition != "p0" || te.TxnID != "t1" || te.Pos != pos {
		t.Fatalf("got %#v", err)
	}
	for _, want := range []string{"p0:7", "max-txn-bytes", "t1", "101 bytes > 100"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if m.Bytes() != 0 || len(m.parts) != 1 || len(m.Open("p0")) != 0 {
		t.Errorf("a refused change was taken: %s", m.Describe())
	}
}

func TestConfigValidation(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{BufferSize: 1, CommitInterval: -1}, "buffer-flush.interval"},
		{Config{BufferSize: 1, MiniSwitchInterval: -1}, "mini-switch-interval-ms"},
		{Config{}, "buffer-size"},
		{Config{BufferSize: 1, MaxTxnBytes: -1}, "max-txn-bytes"},
		{Config{BufferSize: 1, CommitRows: -1}, "max-rows"},
		{Config{BufferSize: 1, CommitBytes: -1}, "max-bytes"},
	} {
		if _, err := New[struct{}](c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error naming %s", c.cfg, err, c.want)
		}
	}
	if _, err := New[struct{}](DefaultConfig()); err != nil {
		t.Errorf("DefaultConfig: %v", err)
	}
}

func TestAdvanceRefusesAForeignPlan(t *testing.T) {
	m, _ := New[struct{}](DefaultConfig())
	defer func() {
		if recover() == nil {
			t.Error("Advance of a plan that is not in flight did not panic")
		}
	}()
	m.Advance(&Plan[struct{}]{})
}

// TestCommitRowsCountsRows: CommitRows (buffer-flush.max-rows)
// counts the changes that can become a row write, as plain mode counts
// rows: an update (-U, +U) is one row and a transaction's END marker none.
// Each case steps one partition's transactions with every timer far off,
// so only the size trigger can cut a plan.
func TestCommitRowsCountsRows(t *testing.T) {
	const (
		ins = changelog.Insert
		ub  = changelog.UpdateBefore
		ua  = changelog.UpdateAfter
		del = changelog.Delete
		end = changelog.EndTxn
	)
	for _, tc := range []struct {
		name string
		txns [][]changelog.Kind // the last change of each ends its transaction
		max  int                // CommitRows
		rows int                // rows counted once every transaction ended
	}{
		{"an insert is one row", [][]changelog.Kind{{ins}}, 1, 1},
		{"an update is one row", [][]changelog.Kind{{ub, ua}}, 1, 1},
		{"an update is not two rows", [][]changelog.Kind{{ub, ua}}, 2, 1},
		{"a lone after image is one row", [][]changelog.Kind{{ua}}, 1, 1},
		{"a delete is one row", [][]changelog.Kind{{del}}, 1, 1},
		{"an END marker counts zero", [][]changelog.Kind{{ins, end}}, 2, 1},
		{"an update and its END are one row", [][]changelog.Kind{{ub, ua, end}}, 2, 1},
		{"an empty transaction counts zero", [][]changelog.Kind{{end}}, 1, 0},
		{"rows add up over transactions", [][]changelog.Kind{{ub, ua, end}, {ins, del, end}, {ub, ua}}, 4, 4},
		{"below the limit over transactions", [][]changelog.Kind{{ub, ua, end}, {ub, ua, end}, {ub, ua, end}}, 4, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New[struct{}](Config{CommitInterval: time.Hour, MiniSwitchInterval: time.Hour, BufferSize: 1 << 20, CommitRows: tc.max})
			if err != nil {
				t.Fatal(err)
			}
			seq := int64(0)
			for i, kinds := range tc.txns {
				for j, k := range kinds {
					seq++
					c := changelog.Change{Kind: k, Table: changelog.Table{Name: "orders"}, TxnID: fmt.Sprint("t", i),
						Pos: changelog.Position{Partition: "p0", Offset: seq, Seq: seq}, TxnEnd: j == len(kinds)-1, Size: 10}
					if err := m.Step(c, t0); err != nil {
						t.Fatal(err)
					}
				}
			}
			if m.doneRows != tc.rows {
				t.Fatalf("%d rows counted, want %d:\n%s", m.doneRows, tc.rows, m.Describe())
			}
			due := tc.rows >= tc.max
			if m.SizeDue() != due {
				t.Fatalf("SizeDue() = %v at %d rows with CommitRows %d", m.SizeDue(), tc.rows, tc.max)
			}
			plan := m.Ready(t0, false)
			if (plan != nil) != due || (plan != nil && plan.Reason != Size) {
				t.Fatalf("Ready at %d rows with CommitRows %d: %s", tc.rows, tc.max, plan.Describe())
			}
			if plan == nil {
				plan = m.Ready(t0, true)
			}
			if plan == nil || plan.Changes != int(seq) {
				t.Fatalf("the plan does not hold every change: %s", plan.Describe())
			}
			if m.doneRows != 0 || m.doneBytes != 0 {
				t.Fatalf("after the plan was cut: %d rows, %d bytes still counted", m.doneRows, m.doneBytes)
			}
		})
	}
}

// TestStepCountedTakesTheCallersCount: with StepCounted, CommitRows
// counts what the caller says each change adds (an engine that knows keys
// counts a key's later changes 0, to count rows after reduction), and
// Drop takes back exactly what was counted.
func TestStepCountedTakesTheCallersCount(t *testing.T) {
	for _, tc := range []struct {
		name   string
		counts []int // one single-change transaction each
		due    bool  // with CommitRows 3
		rows   int
	}{
		{"a hot key counts once", []int{1, 0, 0, 0, 0}, false, 1},
		{"new keys count", []int{1, 0, 1, 0, 1}, true, 3},
		{"a moved row counts twice", []int{2, 1}, true, 3},
		{"a negative count is none", []int{1, -5, 1}, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New[struct{}](Config{CommitInterval: time.Hour, MiniSwitchInterval: time.Hour, BufferSize: 1 << 20, CommitRows: 3})
			if err != nil {
				t.Fatal(err)
			}
			for i, n := range tc.counts {
				seq := int64(i + 1)
				c := changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Name: "orders"}, TxnID: fmt.Sprint("t", i),
					Pos: changelog.Position{Partition: "p0", Offset: seq, Seq: seq}, TxnEnd: true, Size: 10}
				if err := m.StepCounted(&c, n, t0); err != nil {
					t.Fatal(err)
				}
			}
			if m.doneRows != tc.rows || m.SizeDue() != tc.due {
				t.Fatalf("%d rows counted, SizeDue %v; want %d, %v", m.doneRows, m.SizeDue(), tc.rows, tc.due)
			}
			if m.Drop("p0"); m.doneRows != 0 {
				t.Fatalf("after Drop: %d rows still counted", m.doneRows)
			}
		})
	}
}

// TestOpenArrayAfterEnd: a partition keeps its array of open changes for
// the next transaction, unless a long transaction grew it past keptOpen;
// either way it holds none of the ended transaction's changes.
func TestOpenArrayAfterEnd(t *testing.T) {
	for _, tc := range []struct {
		changes int
		kept    bool
	}{{10, true}, {keptOpen + 1, false}} {
		m, err := New[struct{}](Config{CommitInterval: time.Hour, MiniSwitchInterval: time.Hour, BufferSize: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		for i := range tc.changes {
			seq := int64(i + 1)
			c := changelog.Change{Kind: changelog.Insert, TxnID: "t1", TxnEnd: i == tc.changes-1, Size: 1,
				Pos: changelog.Position{Partition: "p0", Offset: seq, Seq: seq}}
			if err := m.Step(c, t0); err != nil {
				t.Fatal(err)
			}
		}
		p := m.byName["p0"]
		left := slices.ContainsFunc(p.open[:cap(p.open)], func(c *changelog.Change) bool { return c != nil })
		if kept := cap(p.open) > 0; kept != tc.kept || len(p.open) != 0 || left {
			t.Errorf("after a transaction of %d changes: %d open, capacity %d kept (want kept %v), pointers left: %v",
				tc.changes, len(p.open), cap(p.open), tc.kept, left)
		}
	}
}

// TestAppendOpen: the open transactions, one per partition in first-seen
// order, with where they start and how far they got; a finished one is
// not among them, even before it is committed.
func TestAppendOpen(t *testing.T) {
	m, err := New[struct{}](Config{CommitInterval: time.Hour, MiniSwitchInterval: time.Hour, BufferSize: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	pos := func(p string, seq int64) changelog.Position {
		return changelog.Position{Partition: p, Offset: 10 * seq, Seq: seq}
	}
	for _, c := range []changelog.Change{
		{Kind: changelog.Insert, TxnID: "b1", Pos: pos("b", 1), Size: 5},
		{Kind: changelog.Insert, TxnID: "a1", Pos: pos("a", 1), Size: 7, TxnEnd: true},
		{Kind: changelog.Insert, TxnID: "a2", Pos: pos("a", 2), Size: 3},
		{Kind: changelog.Insert, TxnID: "b1", Pos: pos("b", 2), Size: 5},
		{Kind: changelog.Insert, Pos: pos("c", 1), Size: 1, TxnEnd: true},
	} {
		if err := m.Step(c, t0); err != nil {
			t.Fatal(err)
		}
	}
	want := []OpenTxn{
		{Partition: "b", ID: "b1", Start: pos("b", 1), Last: pos("b", 2), Changes: 2, Bytes: 10},
		{Partition: "a", ID: "a2", Start: pos("a", 2), Last: pos("a", 2), Changes: 1, Bytes: 3},
	}
	scratch := make([]OpenTxn, 0, 4)
	if got := m.AppendOpen(scratch); !slices.Equal(got, want) || len(got) != m.OpenTxns() {
		t.Errorf("AppendOpen = %+v\nwant %+v (OpenTxns %d)", got, want, m.OpenTxns())
	}
}

// TestEachFrozen: EachFrozen visits the frozen chunks the next plan will
// take — partition by partition in first-seen order, each in source
// order — and not those of the plan in flight; Frozen counts them.
func TestEachFrozen(t *testing.T) {
	m, err := New[string](Config{CommitInterval: time.Second, MiniSwitchInterval: 0, BufferSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	end := func(part string, off int64, name string, at time.Time) {
		t.Helper()
		*m.Finished(part) = name
		if err := m.Step(changelog.Change{Pos: changelog.Position{Partition: part, Offset: off}, TxnEnd: true, Size: 1}, at); err != nil {
			t.Fatal(err)
		}
	}
	visit := func() []string {
		var got []string
		m.EachFrozen(func(v string) bool { got = append(got, v); return true })
		return got
	}
	// With no mini-switch interval every end freezes its chunk.
	end("p0", 1, "a", t0)
	end("p1", 1, "b", t0)
	end("p0", 2, "c", t0)
	if got := visit(); !slices.Equal(got, []string{"a", "c", "b"}) || m.Frozen() != 3 {
		t.Fatalf("EachFrozen visited %v (Frozen %d), want a c b (3)", got, m.Frozen())
	}
	var first []string
	m.EachFrozen(func(v string) bool { first = append(first, v); return false })
	if !slices.Equal(first, []string{"a"}) {
		t.Errorf("EachFrozen went on after false: %v", first)
	}
	plan := m.Ready(t0.Add(time.Second), false)
	if plan == nil || len(plan.Chunks) != 3 {
		t.Fatalf("plan %v, want the 3 chunks", plan)
	}
	end("p1", 2, "d", t0.Add(time.Second))
	if got := visit(); !slices.Equal(got, []string{"d"}) || m.Frozen() != 1 {
		t.Errorf("with a plan in flight EachFrozen visited %v (Frozen %d), want only d (1)", got, m.Frozen())
	}
	m.Advance(plan)
	if got := visit(); !slices.Equal(got, []string{"d"}) {
		t.Errorf("after Advance EachFrozen visited %v, want d", got)
	}
}
