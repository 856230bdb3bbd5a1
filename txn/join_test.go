package txn

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
)

// joinScript drives a Joiner: each step adds one record, then the test
// drains Next and compares what was released.
type joinStep struct {
	part string // "x" is the boundary partition
	// rec: "T1" a data change of T1, "-" a record without changes (a
	// tombstone, a BEGIN), "end T1 3" an END of T1 counting 3 events,
	// "free" a change outside any transaction.
	rec  string
	want string // what Next releases after the step, "" for nothing
}

func runJoin(t *testing.T, steps []joinStep) {
	t.Helper()
	j := NewJoiner("x", 0)
	off := map[string]int64{}
	for i, s := range steps {
		off[s.part]++
		pos := changelog.Position{Partition: s.part, Offset: off[s.part], Seq: off[s.part]}
		var changes []changelog.Change
		switch f := strings.Fields(s.rec); {
		case s.rec == "-":
		case f[0] == "end":
			var n int
			fmt.Sscan(f[2], &n)
			changes = []changelog.Change{{Kind: changelog.EndTxn, TxnID: f[1], TxnEnd: true, TxnEvents: int32(n), Pos: pos}}
		case f[0] == "free":
			changes = []changelog.Change{{Kind: changelog.Insert, Pos: pos, Size: 10}}
		default:
			changes = []changelog.Change{{Kind: changelog.Insert, TxnID: f[0], Pos: pos, Size: 10}}
		}
		if err := j.Add(pos, changes); err != nil {
			t.Fatalf("step %d (%s %s): %v", i, s.part, s.rec, err)
		}
		var got []string
		for g := j.Next(); g != nil; g = j.Next() {
			var recs []string
			for _, r := range g.Records {
				recs = append(recs, r.Pos.String())
			}
			got = append(got, fmt.Sprintf("%s[%s]", g.TxnID, strings.Join(recs, " ")))
		}
		if strings.Join(got, " ") != s.want {
			t.Fatalf("step %d (%s %s): released %q, want %q", i, s.part, s.rec, strings.Join(got, " "), s.want)
		}
	}
	if j.Bytes() != 0 || j.Open() != 0 {
		t.Fatalf("after the script: %d bytes, %d open transactions held", j.Bytes(), j.Open())
	}
}

func TestJoiner(t *testing.T) {
	for name, steps := range map[string][]joinStep{
		"end after the data": {
			{"x", "-", "[x:1]"},
			{"a", "T1", ""},
			{"b", "T1", ""},
			{"x", "end T1 2", "T1[a:1 b:1 x:2]"},
		},
		"end before the data": {
			{"x", "-", "[x:1]"},
			{"x", "end T1 2", ""},
			{"b", "T1", ""},
			{"a", "T1", "T1[b:1 a:1 x:2]"},
		},
		"a later transaction waits for an earlier one": {
			// T2 is whole before T1; it still comes second.
			{"x", "end T1 2", ""},
			{"x", "end T2 1", ""},
			{"c", "T2", ""},
			{"a", "T1", ""},
			{"b", "T1", "T1[a:1 b:1 x:1] T2[c:1 x:2]"},
		},
		"records outside transactions go at once, in partition order": {
			{"a", "T1", ""},
			{"a", "-", ""}, // a tombstone behind T1's delete waits for T1
			{"b", "free", "[b:1]"},
			{"x", "end T1 1", "T1[a:1 x:1] [a:2]"},
		},
		"a tombstone between two records of a transaction": {
			{"a", "T1", ""},
			{"a", "-", ""},
			{"a", "T1", ""},
			{"a", "-", ""},
			{"x", "end T1 2", "T1[a:1 a:2 a:3 x:1] [a:4]"},
		},
		"several records of one transaction in one partition": {
			{"a", "T1", ""},
			{"a", "T1", ""},
			{"a", "T2", ""},
			{"x", "end T1 2", "T1[a:1 a:2 x:1]"},
			{"x", "-", "[x:2]"},
			{"x", "end T2 1", "T2[a:3 x:3]"},
		},
		"an empty transaction": {
			{"x", "-", "[x:1]"},
			{"x", "end T1 0", "T1[x:2]"},
		},
	} {
		t.Run(name, func(t *testing.T) { runJoin(t, steps) })
	}
}

func TestJoinerRefusals(t *testing.T) {
	at := func(p string, n int64) changelog.Position { return changelog.Position{Partition: p, Offset: n, Seq: n} }
	data := func(txn string) []changelog.Change {
		return []changelog.Change{{Kind: changelog.Insert, TxnID: txn, Size: 10}}
	}
	end := func(txn string, n int) []changelog.Change {
		return []changelog.Change{{Kind: changelog.EndTxn, TxnID: txn, TxnEnd: true, TxnEvents: int32(n)}}
	}
	for _, c := range []struct {
		name string
		run  func(j *Joiner) error
		want string
	}{
		{"more events than the END counts", func(j *Joiner) error {
			j.Add(at("x", 1), end("T1", 1))
			j.Add(at("a", 1), data("T1"))
			return j.Add(at("b", 1), data("T1"))
		}, "b:1: transaction T1 has more events (2 so far) than its END counts (1)"},
		{"END after too many events", func(j *Joiner) error {
			j.Add(at("a", 1), data("T1"))
			j.Add(at("b", 1), data("T1"))
			return j.Add(at("x", 1), end("T1", 1))
		}, "x:1: transaction T1 has more events (2) than its END counts (1)"},
		{"a second END", func(j *Joiner) error {
			j.Add(at("x", 1), end("T1", 1))
			return j.Add(at("x", 2), end("T1", 1))
		}, "x:2: a second END of transaction T1"},
		{"an event after its transaction was applied", func(j *Joiner) error {
			j.Add(at("a", 1), data("T1"))
			j.Add(at("x", 1), end("T1", 1))
			for j.Next() != nil {
			}
			return j.Add(at("b", 1), data("T1"))
		}, "b:1: an event of transaction T1, which was complete and applied already"},
		{"a data change in the transaction topic", func(j *Joiner) error {
			return j.Add(at("x", 1), []changelog.Change{{Kind: changelog.Insert, Table: changelog.Table{Namespace: "s", Name: "t"}}})
		}, "x:1: the transaction topic holds a +I change of table s.t"},
		{"a record of two transactions", func(j *Joiner) error {
			return j.Add(at("a", 1), append(data("T1"), data("T2")...))
		}, `a:1: one record holds changes of transactions "T1" and "T2"`},
		{"an END that never comes", func(j *Joiner) error {
			for i := int64(1); ; i++ {
				if err := j.Add(at("a", i), data("T1")); err != nil {
					return err
				}
			}
		}, "a:11: 110 bytes of records wait for the ends of 1 transactions (limit 100)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.run(NewJoiner("x", 100))
			if !errors.Is(err, ErrJoin) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an ErrJoin containing %q", err, c.want)
			}
		})
	}
}

// TestJoinerRandom replays random commit histories: transactions over
// random tables, each table a partition, each table's records in commit
// order, the partitions and the transaction topic interleaved at random.
// Transactions must come out whole, in commit order, and each partition's
// released records must be a prefix of what was added.
func TestJoinerRandom(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		tables := 1 + rng.IntN(4)
		type rec struct {
			part    string
			changes []changelog.Change
		}
		lanes := map[string][]rec{}
		var order []string
		for i := 0; i < 1+rng.IntN(30); i++ {
			id := fmt.Sprintf("T%d", i)
			order = append(order, id)
			n := rng.IntN(5) // 0: an empty transaction
			lanes["x"] = append(lanes["x"], rec{"x", nil})
			for k := 0; k < n; k++ {
				p := fmt.Sprintf("t%d", rng.IntN(tables))
				lanes[p] = append(lanes[p], rec{p, []changelog.Change{{Kind: changelog.Insert, TxnID: id, Size: 1}}})
				if rng.IntN(4) == 0 {
					lanes[p] = append(lanes[p], rec{p, nil}) // a tombstone
				}
			}
			lanes["x"] = append(lanes["x"], rec{"x", []changelog.Change{{Kind: changelog.EndTxn, TxnID: id, TxnEnd: true, TxnEvents: int32(n)}}})
		}
		j := NewJoiner("x", 0)
		added := map[string]int64{}
		released := map[string]int64{}
		var gotOrder []string
		for len(lanes) > 0 {
			var names []string
			for p := range lanes {
				names = append(names, p)
			}
			// Map order is random; sort for a reproducible seed.
			slices.Sort(names)
			p := names[rng.IntN(len(names))]
			r := lanes[p][0]
			if lanes[p] = lanes[p][1:]; len(lanes[p]) == 0 {
				delete(lanes, p)
			}
			added[p]++
			pos := changelog.Position{Partition: p, Offset: added[p], Seq: added[p]}
			if err := j.Add(pos, r.changes); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			for g := j.Next(); g != nil; g = j.Next() {
				if g.TxnID != "" {
					gotOrder = append(gotOrder, g.TxnID)
				}
				for _, r := range g.Records {
					if r.Pos.Offset != released[r.Pos.Partition]+1 {
						t.Fatalf("seed %d: released %s after %d records of its partition: not a prefix", seed, r.Pos, released[r.Pos.Partition])
					}
					released[r.Pos.Partition] = r.Pos.Offset
					for _, c := range r.Changes {
						if c.TxnID != g.TxnID {
							t.Fatalf("seed %d: group %q holds a change of %q", seed, g.TxnID, c.TxnID)
						}
					}
				}
			}
		}
		if strings.Join(gotOrder, ",") != strings.Join(order, ",") {
			t.Fatalf("seed %d: released %v, want commit order %v", seed, gotOrder, order)
		}
		if j.Bytes() != 0 || j.Open() != 0 {
			t.Fatalf("seed %d: %d bytes and %d transactions left", seed, j.Bytes(), j.Open())
		}
	}
}
