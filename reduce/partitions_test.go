package reduce

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/schema"
)

// op is one change of a partition script: kind, partition, order id (and
// for a key move the id it moves from), or an "append-only" insert.
type op struct {
	kind     changelog.Kind
	part     string
	id, from int
	events   bool // an insert into the append-only table events
	take     bool // Take before the change: a new unit
}

// play adds the ops to b (from the tables orders and events), taking a
// unit whenever an op asks, and returns the first error with the index of
// its op (-1 when none).
func play(t *testing.T, b *Buffer, tabs tables, ops []op) (int, error) {
	t.Helper()
	return playFrom(t, b, tabs, ops, 0, len(ops))
}

// playFrom is play of ops[from:to] alone, each op at the position and
// with the values it has in a play of all ops.
func playFrom(t *testing.T, b *Buffer, tabs tables, ops []op, from, to int) (int, error) {
	t.Helper()
	orders, events := tabs.orders, tabs.events
	seq := map[string]int64{}
	for i, o := range ops[:to] {
		seq[o.part]++
		if i < from {
			continue
		}
		if o.take {
			b.Take()
		}
		c := changelog.Change{Kind: o.kind, Pos: changelog.Position{Partition: o.part, Offset: seq[o.part] * 10, Seq: seq[o.part]}, Size: 10}
		img := func(id int) changelog.Row {
			return row("id", changelog.Number(fmt.Sprint(id)), "amount", changelog.Number("1.00"), "status", fmt.Sprint("s", i))
		}
		tbl := orders
		switch {
		case o.events:
			tbl, c.After = events, row("id", changelog.Number(fmt.Sprint(o.id)), "e", fmt.Sprint("x", i))
		case o.kind == changelog.Delete:
			c.Before = img(o.id)
		case o.kind == changelog.UpdateAfter && o.from != 0:
			c.Before, c.After = img(o.from), img(o.id)
		default:
			c.After = img(o.id)
		}
		if err := b.Add(tbl, &c, t0); err != nil {
			return i, err
		}
	}
	return -1, nil
}

// tables are the tables play writes.
type tables struct{ orders, events *Table }

func newTables(t *testing.T) tables { return tables{ordersTable(t), eventsTable(t)} }

func eventsTable(t testing.TB) *Table {
	t.Helper()
	tbl, err := NewTable(&schema.Table{Name: "events", Columns: []schema.Column{{Name: "id", Class: schema.Int}, {Name: "e", Class: schema.String}}}, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

var (
	ins = changelog.Insert
	upd = changelog.UpdateAfter
	del = changelog.Delete
)

// TestCrossPartition: a confined buffer stops at the first change of a key
// another partition changed, in the same unit or, through the memory, in
// an earlier one, naming the table, the key, both partitions and both
// positions; a key whose changes stay in one partition never stops it,
// whether it moves by an update's before and after images or fills
// many units, nor do the inserts of an append-only table.
func TestCrossPartition(t *testing.T) {
	for _, tc := range []struct {
		name   string
		memory int // 0: no memory, the unit only
		ops    []op
		// bad is the index of the op refused (-1: none); want are the
		// fragments its message holds.
		bad  int
		want []string
	}{
		{"an update in another partition, same unit", 0,
			[]op{{kind: ins, part: "day1", id: 7}, {kind: ins, part: "day1", id: 8}, {kind: upd, part: "day2", id: 7}},
			2, []string{"day2:1: table orders key (7)", "day2 here, and day1 at day1:1 (a change buffered for the same commit)", "put one key's changes in one partition", "source.paths", "primary key"}},
		{"a delete in another partition, same unit", 0,
			[]op{{kind: ins, part: "a", id: 7}, {kind: del, part: "b", id: 7}},
			1, []string{"b:1: table orders key (7)", "b here, and a at a:1"}},
		{"the insert after the update", 0,
			[]op{{kind: upd, part: "day2", id: 7}, {kind: ins, part: "day1", id: 7}},
			1, []string{"day1:1: table orders key (7)", "day1 here, and day2 at day2:1"}},
		{"the moved-from key of an update in another partition", 0,
			[]op{{kind: ins, part: "a", id: 1}, {kind: upd, part: "b", from: 1, id: 2}},
			1, []string{"b:1: table orders key (1)", "b here, and a at a:1"}},
		{"the moved-to key of an update in another partition", 0,
			[]op{{kind: ins, part: "a", id: 2}, {kind: upd, part: "b", from: 1, id: 2}},
			1, []string{"b:1: table orders key (2)", "b here, and a at a:1"}},
		{"another unit, without the memory: not seen", 0,
			[]op{{kind: ins, part: "a", id: 7}, {kind: upd, part: "b", id: 7, take: true}},
			-1, nil},
		{"another unit, with the memory", 10,
			[]op{{kind: ins, part: "day1", id: 7}, {kind: ins, part: "day1", id: 8}, {kind: upd, part: "day2", id: 8, take: true}},
			2, []string{"day2:1: table orders key (8)", "day2 here, and day1 at day1:2 (a change read earlier, remembered by key-partitions.remember)"}},
		{"a delete in a later unit, with the memory", 10,
			[]op{{kind: ins, part: "a", id: 7}, {kind: del, part: "b", id: 7, take: true}},
			1, []string{"b:1: table orders key (7)", "and a at a:1"}},
		{"one partition, many units and changes", 2,
			[]op{{kind: ins, part: "a", id: 1}, {kind: upd, part: "a", id: 1}, {kind: del, part: "a", id: 1, take: true},
				{kind: ins, part: "a", id: 1, take: true}, {kind: ins, part: "a", id: 2}, {kind: ins, part: "a", id: 3, take: true}},
			-1, nil},
		{"a key moved by an update inside one partition", 10,
			[]op{{kind: ins, part: "a", id: 1}, {kind: upd, part: "a", from: 1, id: 2}, {kind: ins, part: "a", id: 1},
				{kind: upd, part: "a", from: 2, id: 3, take: true}, {kind: ins, part: "b", id: 4}, {kind: del, part: "a", id: 3}},
			-1, nil},
		{"keys of their own in each partition", 10,
			[]op{{kind: ins, part: "a", id: 1}, {kind: ins, part: "b", id: 2}, {kind: upd, part: "a", id: 1}, {kind: upd, part: "b", id: 2, take: true},
				{kind: del, part: "a", id: 1}, {kind: del, part: "b", id: 2}},
			-1, nil},
		{"an append-only table's inserts from every partition", 10,
			[]op{{events: true, kind: ins, part: "a", id: 1}, {events: true, kind: ins, part: "b", id: 1}, {events: true, kind: ins, part: "c", id: 1, take: true},
				{events: true, kind: ins, part: "a", id: 1}},
			-1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tabs := newTables(t)
			b := NewBuffer("p")
			var kp *KeyPartitions
			if tc.memory > 0 {
				kp = NewKeyPartitions(tc.memory)
			}
			b.ConfinePartitions(kp)
			at, err := play(t, b, tabs, tc.ops)
			if at != tc.bad {
				t.Fatalf("refused op %d (%v), want op %d", at, err, tc.bad)
			}
			if err == nil {
				return
			}
			var re *Error
			if !errors.As(err, &re) || !errors.Is(err, ErrCrossPartition) {
				t.Fatalf("error %T %v, want a *reduce.Error wrapping ErrCrossPartition", err, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestCrossPartitionLeavesTheBuffer: a change refused for its partition
// leaves the buffer as it was, the delete of a moved-from key included.
func TestCrossPartitionLeavesTheBuffer(t *testing.T) {
	tabs := newTables(t)
	b := NewBuffer("p")
	b.ConfinePartitions(NewKeyPartitions(10))
	if _, err := play(t, b, tabs, []op{{kind: ins, part: "a", id: 2}, {kind: ins, part: "b", id: 5}}); err != nil {
		t.Fatal(err)
	}
	rows, bytes, changes := b.Rows(), b.Bytes(), b.Changes()
	// b moves key 1 to key 2, which a holds.
	if _, err := play(t, b, tabs, []op{{kind: upd, part: "b", from: 1, id: 2}}); !errors.Is(err, ErrCrossPartition) {
		t.Fatalf("got %v, want the cross-partition error", err)
	}
	if b.Rows() != rows || b.Bytes() != bytes || b.Changes() != changes {
		t.Errorf("rows/bytes/changes %d/%d/%d after the refusal, want %d/%d/%d", b.Rows(), b.Bytes(), b.Changes(), rows, bytes, changes)
	}
	if got := describe(b.Take()); strings.Contains(got, "DELETE") {
		t.Errorf("the refused update's delete of key 1 was kept:\n%s", got)
	}
	// Nor did the memory take key 1 from b: a may still write it.
	if _, err := play(t, b, tabs, []op{{kind: ins, part: "a", id: 1}}); err != nil {
		t.Errorf("key 1 in a after b's refused move: %v", err)
	}
}

// TestMergeConfined: per-partition buffers merged into a confined one
// stop at a key two of them hold, and merge keys of their own as Merge
// always does.
func TestMergeConfined(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []op
		bad  bool
	}{
		{"disjoint keys", []op{{kind: ins, part: "a", id: 1}, {kind: upd, part: "a", id: 1}}, []op{{kind: ins, part: "b", id: 2}, {kind: del, part: "b", id: 3}}, false},
		{"one key in both", []op{{kind: ins, part: "a", id: 1}}, []op{{kind: ins, part: "b", id: 4}, {kind: upd, part: "b", id: 1}}, true},
		{"an append-only table in both", []op{{events: true, kind: ins, part: "a", id: 1}}, []op{{events: true, kind: ins, part: "b", id: 1}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tabs := newTables(t)
			pa, pb := NewBuffer("p"), NewBuffer("p")
			pa.ConfinePartitions(nil)
			pb.ConfinePartitions(nil)
			if _, err := play(t, pa, tabs, tc.a); err != nil {
				t.Fatal(err)
			}
			if _, err := play(t, pb, tabs, tc.b); err != nil {
				t.Fatal(err)
			}
			merged := NewBuffer("p")
			merged.ConfinePartitions(nil)
			if err := merged.Merge(pa); err != nil {
				t.Fatal(err)
			}
			err := merged.Merge(pb)
			if !tc.bad {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrCrossPartition) {
				t.Fatalf("got %v, want the cross-partition error", err)
			}
			if want := "b:2: table orders key (1): this key's changes come from two partitions: b here, and a at a:1 (a change buffered for the same commit)"; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q, want it to start %q", err, want)
			}
		})
	}
}

// TestKeyPartitionsEviction: a memory of n key writes reports every key
// it holds, and none it has evicted: after keys 1..n+k, each written once
// from partition a, keys 1..k are forgotten and the last n are held. A
// key written again moves to the front and outlives the keys written once
// after its first write.
func TestKeyPartitionsEviction(t *testing.T) {
	for _, n := range []int{1, 2, 5, 1000, 3000} {
		for _, k := range []int{0, 1, n / 2, n, 2 * n} {
			t.Run(fmt.Sprintf("n=%d,k=%d", n, k), func(t *testing.T) {
				tabs := newTables(t)
				b := NewBuffer("p")
				kp := NewKeyPartitions(n)
				b.ConfinePartitions(kp)
				var ops []op
				for id := 1; id <= n+k; id++ {
					// A unit per key: the memory, not the buffer, must
					// know it.
					ops = append(ops, op{kind: ins, part: "a", id: id, take: true})
				}
				if _, err := play(t, b, tabs, ops); err != nil {
					t.Fatal(err)
				}
				if kp.Len() != n {
					t.Errorf("the memory holds %d keys, want %d", kp.Len(), n)
				}
				// Held keys first: a refusal changes nothing. Then the
				// forgotten ones, each taken from b, which evicts the
				// oldest held key, tested already.
				tbl := tabs.orders
				for id := n + k; id >= 1; id-- {
					b.Take()
					c := changelog.Change{Kind: upd, Pos: changelog.Position{Partition: "b", Seq: 1},
						After: row("id", changelog.Number(fmt.Sprint(id)), "amount", changelog.Number("2.00"), "status", "x")}
					err := b.Add(tbl, &c, t0)
					if held := id > k; held != (err != nil) {
						t.Fatalf("key %d: error %v, want one: %v (held: the last %d of %d keys)", id, err, held, n, n+k)
					}
				}
			})
		}
	}
	t.Run("a key written again moves to the front", func(t *testing.T) {
		tabs := newTables(t)
		b := NewBuffer("p")
		b.ConfinePartitions(NewKeyPartitions(3))
		// 1, 2, 3, then 1 again and 4: 2 is the oldest and goes, 1 stays.
		if _, err := play(t, b, tabs, []op{{kind: ins, part: "a", id: 1}, {kind: ins, part: "a", id: 2, take: true}, {kind: ins, part: "a", id: 3, take: true},
			{kind: upd, part: "a", id: 1, take: true}, {kind: ins, part: "a", id: 4, take: true}}); err != nil {
			t.Fatal(err)
		}
		if _, err := play(t, b, tabs, []op{{kind: upd, part: "b", id: 1, take: true}}); !errors.Is(err, ErrCrossPartition) {
			t.Errorf("key 1, written again, was forgotten: %v", err)
		}
		if _, err := play(t, b, tabs, []op{{kind: upd, part: "b", id: 2, take: true}}); err != nil {
			t.Errorf("key 2, the oldest, is still held: %v", err)
		}
	})
}

// TestKeyPartitionsModel checks the memory against a model, a list of
// the last n key writes, over random writes of 3 partitions and few keys
// (so that keys cross, repeat and are evicted): the same refusals, with
// the same earlier position, the same keys held.
func TestKeyPartitionsModel(t *testing.T) {
	type write struct {
		key  uint64
		pos  changelog.Position
		dead bool
	}
	for seed := uint64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		n := 1 + rng.IntN(40)
		keys := 1 + rng.IntN(3*n)
		kp := NewKeyPartitions(n)
		var model []write // the last n writes, oldest first
		for step := range 2000 {
			key := uint64(rng.IntN(keys))
			pos := changelog.Position{Partition: fmt.Sprint("p", rng.IntN(3)), Seq: int64(step + 1)}
			// Hashes that share their first half now and then, as the
			// index's probes must not confuse.
			h1, h2 := (key%7)*0x2545f4914f6cdd1d, key*0x9e3779b97f4a7c15+1
			last := -1
			for i := range model {
				if model[i].key == key && !model[i].dead {
					last = i
				}
			}
			wantOther, wantCross := changelog.Position{}, last >= 0 && model[last].pos.Partition != pos.Partition
			if wantCross {
				wantOther = model[last].pos
			} else {
				if last >= 0 {
					model[last].dead = true
				}
				model = append(model, write{key: key, pos: pos})
				if len(model) > n {
					model = model[1:]
				}
			}
			other, crossed := kp.note(h1, h2, kp.part(pos.Partition), pos)
			if crossed != wantCross || other != wantOther {
				t.Fatalf("seed %d (n %d, %d keys), step %d: key %d from %s: crossed %v at %v, want %v at %v",
					seed, n, keys, step, key, pos.Partition, crossed, other, wantCross, wantOther)
			}
			live := 0
			for _, w := range model {
				if !w.dead {
					live++
				}
			}
			if kp.Len() != live {
				t.Fatalf("seed %d, step %d: the memory holds %d keys, the model %d", seed, step, kp.Len(), live)
			}
		}
	}
}

// TestKeyPartitionsBytes: the memory costs at most 32 bytes and a page's
// rounding per key of its limit, full, and grows with the keys met.
func TestKeyPartitionsBytes(t *testing.T) {
	const n = 200_000
	kp := NewKeyPartitions(n)
	for i := range uint64(n / 10) {
		kp.note(i*0x9e3779b97f4a7c15, i, kp.part("a"), changelog.Position{Partition: "a", Seq: int64(i + 1)})
	}
	if got := kp.Bytes(); got > n/10*keyBytes*2 {
		t.Errorf("%d bytes for %d keys of %d: it should grow with the keys met", got, n/10, n)
	}
	for i := range uint64(3 * n) {
		kp.note(i*0x9e3779b97f4a7c15, i, kp.part("a"), changelog.Position{Partition: "a", Seq: int64(i + 1)})
	}
	if got, most := kp.Bytes(), int64(n*keyBytes+ringPage*24+8); got > most {
		t.Errorf("%d bytes (%.1f a key) for a limit of %d, want at most %d", got, float64(got)/n, n, most)
	}
	t.Logf("%d keys: %d bytes, %.1f bytes a key", n, kp.Bytes(), float64(kp.Bytes())/n)
}
