package reduce

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
)

// TestPartitionLayoutsProperty plays random changelogs of one keyed and
// one append-only table, spread over random partition layouts, through a
// confined buffer with a memory of random reach, cut into units at random,
// read in a random interleaving of the partitions (each in its order),
// and applies the units to a map. What it asserts is what is promised:
//
//   - Keys confined to one partition each (an update may move a row, to a
//     key of the same partition): never a stop, and the map ends exactly
//     as replaying the changelog in source order would leave it.
//   - Keys spread over partitions: the run stops with the cross-partition
//     error exactly at the first change whose key the unit holds from
//     another partition, or the memory does (it holds a key until limit
//     key writes came after its last one, a key write being a key
//     entering a unit). When the memory reaches back over every key
//     write and some key's changes follow each other from two partitions
//     in the read order, it always stops. A key the memory has forgotten
//     is not checked against its older changes: a run that does not stop
//     applies each key's last change in the read order, which is all that
//     is promised then.
func TestPartitionLayoutsProperty(t *testing.T) {
	tabs := newTables(t)
	stops, exact, unchecked := 0, 0, 0
	for seed := uint64(0); seed < 2000; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		nParts := 2 + rng.IntN(3)
		nKeys := 1 + rng.IntN(12)
		// Layouts: every key in a partition of its own choosing, every
		// change in a partition at random, or all keys confined but one.
		layout := rng.IntN(3)
		confined := layout == 0
		owner := make([]int, nKeys+1)
		for k := range owner {
			owner[k] = rng.IntN(nParts)
		}
		// The changelog in source order, each change tagged with its
		// partition.
		type change struct {
			c    changelog.Change
			tbl  *Table
			from int // the key an update moves from, 0 for none
			id   int
		}
		var source []change
		for i := range 10 + rng.IntN(60) {
			id := 1 + rng.IntN(nKeys)
			p := owner[id]
			if layout == 1 || (layout == 2 && id == 1) {
				p = rng.IntN(nParts)
			}
			ch := change{id: id, tbl: tabs.orders}
			ch.c.Pos.Partition = fmt.Sprint("p", p)
			img := func(id int) changelog.Row {
				return row("id", changelog.Number(fmt.Sprint(id)), "amount", changelog.Number("1.00"), "status", fmt.Sprint("s", i))
			}
			switch rng.IntN(6) {
			case 0, 1:
				ch.c.Kind, ch.c.After = changelog.Insert, img(id)
			case 2:
				ch.c.Kind, ch.c.After = changelog.UpdateAfter, img(id)
			case 3:
				// A move, to a key of the same partition when confined.
				from := 1 + rng.IntN(nKeys)
				if layout != 1 && owner[from] != owner[id] {
					from = id
				}
				ch.c.Kind, ch.c.Before, ch.c.After = changelog.UpdateAfter, img(from), img(id)
				if from != id {
					ch.from = from
				}
			case 4:
				ch.c.Kind, ch.c.Before = changelog.Delete, img(id)
			case 5:
				ch.tbl, ch.c.Kind, ch.c.After = tabs.events, changelog.Insert, row("id", changelog.Number(fmt.Sprint(id)), "e", fmt.Sprint("x", i))
			}
			source = append(source, ch)
		}
		// Positions per partition, in source order; then a random
		// interleaving of the partitions as the read order.
		queues := make([][]change, nParts)
		for _, ch := range source {
			var p int
			fmt.Sscanf(ch.c.Pos.Partition, "p%d", &p)
			ch.c.Pos.Seq = int64(len(queues[p]) + 1)
			ch.c.Pos.Offset = ch.c.Pos.Seq
			queues[p] = append(queues[p], ch)
		}
		var read []change
		for len(read) < len(source) {
			p := rng.IntN(nParts)
			if len(queues[p]) > 0 {
				read, queues[p] = append(read, queues[p][0]), queues[p][1:]
			}
		}
		limit := 1 + rng.IntN(3*nKeys)
		if rng.IntN(4) == 0 {
			limit = 10_000 // reaches back over every key write
		}
		takeAt := make([]bool, len(read))
		for i := range takeAt {
			takeAt[i] = rng.IntN(3) == 0
		}

		// The model: the unit's keys and their partitions, and the last
		// limit key writes.
		type write struct {
			id   int
			part string
		}
		var writes []write
		unit := map[int]string{}
		held := func(id int) (string, bool) {
			for i := len(writes) - 1; i >= max(0, len(writes)-limit); i-- {
				if writes[i].id == id {
					return writes[i].part, true
				}
			}
			return "", false
		}
		crosses := func(id int, part string) bool {
			if p, ok := unit[id]; ok {
				return p != part
			}
			p, ok := held(id)
			return ok && p != part
		}
		enter := func(id int, part string) {
			if _, ok := unit[id]; !ok {
				unit[id] = part
				writes = append(writes, write{id, part})
			}
		}
		wantStop := -1
		for i, ch := range read {
			if takeAt[i] {
				clear(unit)
			}
			if ch.tbl == tabs.events {
				continue
			}
			part := ch.c.Pos.Partition
			if crosses(ch.id, part) || (ch.from != 0 && crosses(ch.from, part)) {
				wantStop = i
				break
			}
			if ch.from != 0 {
				enter(ch.from, part)
			}
			enter(ch.id, part)
		}
		// Some key's changes follow each other from two partitions.
		adjacent := false
		last := map[int]string{}
		for _, ch := range read {
			if ch.tbl == tabs.events {
				continue
			}
			for _, id := range []int{ch.from, ch.id} {
				if p, ok := last[id]; id != 0 && ok && p != ch.c.Pos.Partition {
					adjacent = true
				}
				if id != 0 {
					last[id] = ch.c.Pos.Partition
				}
			}
		}

		// The run.
		b := NewBuffer("p")
		b.ConfinePartitions(NewKeyPartitions(limit))
		state := map[string]string{}
		inserted := 0
		apply := func(u *commit.Unit) {
			inserted += applyUnit(state, u, func(r []any) string { return fmt.Sprint(r[2]) })
		}
		gotStop := -1
		var stopErr error
		for i := range read {
			if takeAt[i] {
				apply(b.Take())
			}
			if err := b.Add(read[i].tbl, &read[i].c, t0); err != nil {
				gotStop, stopErr = i, err
				break
			}
		}
		apply(b.Take())

		what := fmt.Sprintf("seed %d (%d partitions, %d keys, confined %v, memory %d)", seed, nParts, nKeys, confined, limit)
		if gotStop != wantStop {
			t.Fatalf("%s: stopped at change %d (%v), want %d", what, gotStop, stopErr, wantStop)
		}
		if stopErr != nil && !errors.Is(stopErr, ErrCrossPartition) {
			t.Fatalf("%s: stopped with %v, want the cross-partition error", what, stopErr)
		}
		if confined && gotStop >= 0 {
			t.Fatalf("%s: a changelog whose keys stay in their partitions stopped: %v", what, stopErr)
		}
		if limit >= 10_000 && adjacent && gotStop < 0 {
			t.Fatalf("%s: keys cross partitions, the memory holds every key, and the run did not stop", what)
		}
		if gotStop >= 0 {
			stops++
			continue
		}
		// Not stopped: the state is the read order's replay, which for
		// confined keys is the source order's.
		order := read
		if confined {
			order = source
		}
		want := map[string]string{}
		events := 0
		for _, ch := range order {
			switch {
			case ch.tbl == tabs.events:
				events++
			case ch.c.Kind == changelog.Delete:
				delete(want, fmt.Sprint(ch.id))
			default:
				if ch.from != 0 {
					delete(want, fmt.Sprint(ch.from))
				}
				st, _ := ch.c.After.Get("status")
				want[fmt.Sprint(ch.id)] = fmt.Sprint(st)
			}
		}
		if !maps.Equal(state, want) || inserted != events {
			t.Fatalf("%s: the target holds %v and %d events, want %v and %d", what, state, inserted, want, events)
		}
		if confined {
			exact++
		} else {
			unchecked++
		}
	}
	t.Logf("%d runs stopped, %d confined runs exact, %d spread runs past the memory's reach", stops, exact, unchecked)
	if stops == 0 || exact == 0 {
		t.Errorf("the generator made too few stops (%d) or confined runs (%d)", stops, exact)
	}
}
