package txn

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/schema"
)

// keyed drives a Machine the way transaction mode does: each source
// transaction is reduced as it ends into its partition's finished
// transactions, a buffer confined to one partition per key and sharing
// one memory of keys' partitions, and a plan's unit is the merge of its
// chunks into a buffer confined without a memory.
type keyed struct {
	t    *testing.T
	m    *Machine[*reduce.Buffer]
	keys *reduce.KeyPartitions
	tbl  *reduce.Table
	seq  map[string]int64
	txns map[string]int // transactions ended per partition, for ids
}

func newKeyed(t *testing.T, memory int) *keyed {
	t.Helper()
	m, err := New[*reduce.Buffer](Config{BufferSize: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := reduce.NewTable(&schema.Table{Name: "kp", PrimaryKey: []string{"id"},
		Columns: []schema.Column{{Name: "id", Class: schema.Int, Bits: 64}, {Name: "v", Class: schema.Int, Bits: 64}}}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	k := &keyed{t: t, m: m, tbl: tbl, seq: map[string]int64{}, txns: map[string]int{}}
	if memory > 0 {
		k.keys = reduce.NewKeyPartitions(memory)
	}
	return k
}

// step steps one change of part writing key id (moved from from, when
// not 0); end ends its transaction, which is reduced then.
func (k *keyed) step(part string, from, id int, end bool) error {
	k.seq[part]++
	c := changelog.Change{Kind: changelog.UpdateAfter, Table: changelog.Table{Name: "kp"}, Size: 10,
		After: changelog.RowOf("id", int64(id), "v", k.seq[part]), TxnID: fmt.Sprint(part, "-", k.txns[part]), TxnEnd: end,
		Pos: changelog.Position{Partition: part, Offset: k.seq[part], Seq: k.seq[part]}}
	if from != 0 {
		c.Before = changelog.RowOf("id", int64(from), "v", int64(0))
	}
	if end {
		k.txns[part]++
		fin := k.m.Finished(part)
		if *fin == nil {
			*fin = reduce.NewBuffer("kp")
			(*fin).ConfinePartitions(k.keys)
		}
		for _, o := range append(k.m.Open(part), &c) {
			if err := (*fin).Add(k.tbl, o, t0); err != nil {
				return err
			}
		}
	}
	if err := k.m.Step(c, t0); err != nil {
		k.t.Fatal(err)
	}
	return nil
}

// commit cuts a plan of every finished transaction and merges its chunks
// into one unit, as the engine does, then advances it.
func (k *keyed) commit() error {
	plan := k.m.Ready(t0, true)
	if plan == nil {
		return nil
	}
	defer k.m.Advance(plan)
	unit := reduce.NewBuffer("kp")
	unit.ConfinePartitions(nil)
	for _, ck := range plan.Chunks {
		if err := unit.Merge(ck.Value); err != nil {
			return err
		}
	}
	unit.Take()
	return nil
}

// TestKeysAcrossPartitionTransactions: in transaction mode a key written
// by transactions of two partitions is refused when the second of them
// is reduced, at its end, whether the first is finished, in a plan
// already committed or the key sits in another partition's open
// transaction; without the memory, when their chunks meet in one plan.
// Keys that stay in their partition, moved by updates or not, never are.
func TestKeysAcrossPartitionTransactions(t *testing.T) {
	// An op: "step PART [FROM>]ID [end]" or "commit".
	for _, tc := range []struct {
		name   string
		memory int
		ops    []string
		// bad is the op refused (-1: none); want is in its message.
		bad  int
		want string
	}{
		{"both finished, one plan", 100,
			[]string{"step a 1 end", "step b 2 end", "step b 1 end", "commit"},
			2, "b:2: table kp key (1): this key's changes come from two partitions: b here, and a at a:1"},
		{"both finished, one plan, no memory", 0,
			[]string{"step a 1 end", "step b 2 end", "step b 1 end", "commit"},
			3, "b:2: table kp key (1): this key's changes come from two partitions: b here, and a at a:1 (a change buffered for the same commit)"},
		{"the first committed", 100,
			[]string{"step a 1 end", "commit", "step b 1 end"},
			2, "b:1: table kp key (1): this key's changes come from two partitions: b here, and a at a:1 (a change read earlier"},
		{"the first committed, no memory: past the check's reach", 0,
			[]string{"step a 1 end", "commit", "step b 1 end", "commit"},
			-1, ""},
		{"in another partition's open transaction", 100,
			[]string{"step a 1", "step b 1", "step b 2 end", "step a 3 end"},
			3, "a:1: table kp key (1): this key's changes come from two partitions: a here, and b at b:1"},
		{"the key one partition's open transaction holds is caught when it ends", 100,
			[]string{"step a 5 end", "step b 1", "step b 5", "step a 6 end", "step b 7 end"},
			4, "b:2: table kp key (5): this key's changes come from two partitions: b here, and a at a:1"},
		{"keys of their own, moved inside their partitions", 100,
			[]string{"step a 1", "step a 1>2 end", "step b 10 end", "commit", "step a 2>1", "step b 10>11", "step b 11 end", "step a 3 end", "commit", "step a 2 end", "commit"},
			-1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKeyed(t, tc.memory)
			bad := -1
			var err error
			for i, op := range tc.ops {
				f := strings.Fields(op)
				if f[0] == "commit" {
					err = k.commit()
				} else {
					var from, id int
					if _, serr := fmt.Sscanf(f[2], "%d>%d", &from, &id); serr != nil {
						from, id = 0, 0
						fmt.Sscan(f[2], &id)
					}
					err = k.step(f[1], from, id, len(f) > 3)
				}
				if err != nil {
					bad = i
					break
				}
			}
			if bad != tc.bad {
				t.Fatalf("refused op %d (%v), want op %d", bad, err, tc.bad)
			}
			if err == nil {
				return
			}
			if !errors.Is(err, reduce.ErrCrossPartition) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want the cross-partition error with %q", err, tc.want)
			}
		})
	}
}
