package starrocks

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/sink/starrocks/starrocksfake"
)

// The tests of the autonomous flush (sink.Streamer) run against the fake
// unless TXSINK_TEST_STARROCKS_URL names a real cluster; those that
// inject faults need the fake.

// kvPart is a part (no progress) of pipeline "pipe" into kv: upserts of
// id = v for ups, deletes of dels, each change at offset off of p0.
func kvPart(t *testing.T, tg *Target, off int64, ups map[int64]int64, dels ...int64) *commit.Unit {
	t.Helper()
	st, err := tg.Describe(context.Background(), schema.Name{Name: "kv"})
	if err != nil {
		t.Fatal(err)
	}
	pos := changelog.Position{Partition: "p0", Offset: off, Seq: off}
	b := &commit.Batch{Table: st}
	for _, id := range dels {
		b.Deletes = append(b.Deletes, []any{id})
		b.DeletePos = append(b.DeletePos, pos)
	}
	if len(ups) > 0 {
		g := commit.Group{Columns: []string{"id", "v"}}
		for id, v := range ups {
			g.Rows = append(g.Rows, []any{id, v})
			g.Pos = append(g.Pos, pos)
		}
		b.Upserts = []commit.Group{g}
	}
	return &commit.Unit{Pipeline: "pipe", Batches: []*commit.Batch{b}, Changes: len(ups) + len(dels)}
}

// kvRows reads kv as id -> v.
func (c *cluster) kvRows(t *testing.T) map[int64]int64 {
	t.Helper()
	rows, err := c.SQL.Query("SELECT id, v FROM kv")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var id, v int64
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		out[id] = v
	}
	return out
}

func sameRows(got, want map[int64]int64) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			return false
		}
	}
	return true
}

// TestStreamVisibleAtCommit: parts streamed into the open transaction are
// invisible to a reader over the MySQL protocol until the unit's Apply
// commits them, then all are there at once; a later part's write of a key
// replaces an earlier one's (upsert, delete, upsert again in load order);
// the unit is one transaction under one label, whose loads per commit
// count the parts' loads.
func TestStreamVisibleAtCommit(t *testing.T) {
	ctx := context.Background()
	c := kvCluster(t)
	tg := c.target(t, 0)
	if err := tg.Apply(ctx, kvUnit(t, tg, 10, 7)); err != nil {
		t.Fatal(err)
	}
	before := c.kvRows(t)
	p1 := kvPart(t, tg, 11, map[int64]int64{1: 1, 2: 2})
	p2 := kvPart(t, tg, 12, map[int64]int64{3: 3}, 1, 7)
	p3 := kvPart(t, tg, 13, map[int64]int64{1: 100})
	for i, p := range []*commit.Unit{p1, p2, p3} {
		if err := tg.Stream(ctx, p); err != nil {
			t.Fatalf("part %d: %v", i+1, err)
		}
		if got := c.kvRows(t); !sameRows(got, before) {
			t.Fatalf("after part %d a reader sees %v, want the committed %v", i+1, got, before)
		}
	}
	u := kvUnit(t, tg, 14, 4)
	u.Parts = []*commit.Unit{p1, p2, p3}
	lpc0, _, _ := tg.client.stats.snapshot()
	if err := tg.Apply(ctx, u); err != nil {
		t.Fatal(err)
	}
	// Three parts, the unit's own rows, its progress.
	if lpc, _, _ := tg.client.stats.snapshot(); lpc.Count != lpc0.Count+1 || lpc.Sum != lpc0.Sum+5 {
		t.Errorf("loads per commit: the commit counted %v loads in %d commits, want 5 in 1", lpc.Sum-lpc0.Sum, lpc.Count-lpc0.Count)
	}
	want := map[int64]int64{1: 100, 2: 2, 3: 3, 4: 40}
	if got := c.kvRows(t); !sameRows(got, want) {
		t.Errorf("after the commit a reader sees %v, want %v", got, want)
	}
	if pos, err := tg.Progress(ctx, "pipe"); err != nil || pos["p0"].Offset != 14 {
		t.Errorf("progress %v (%v), want p0 at 14", pos, err)
	}
	if c.fake == nil {
		return
	}
	begins, loads := map[string]int{}, map[string]int{}
	for _, r := range c.fake.Requests() {
		label := r.Header.Get("label")
		switch {
		case strings.HasSuffix(r.Path, "/api/transaction/begin"):
			begins[label]++
		case r.Role == "BE" && strings.HasPrefix(r.Path, "/api/transaction/load"):
			loads[label]++
		}
	}
	last := Label("pipe", tg.owner["pipe"], tg.seq["pipe"])
	if loads[last] != 5 || begins[last] != 1 {
		t.Errorf("label %s: %d begins, %d loads; want 1 begin and 5 loads (3 parts, the rows, the progress): %v", last, begins[last], loads[last], loads)
	}
}

// TestStreamFailedPartLoadedAgain: a part whose load fails rolls the open
// transaction back; Stream then refuses the parts after it without
// loading them, and the unit's Apply loads every part again in a new
// transaction, so the commit is whole.
func TestStreamFailedPartLoadedAgain(t *testing.T) {
	ctx := context.Background()
	c := kvCluster(t)
	f := c.needFake(t)
	tg := c.target(t, 0)
	p1 := kvPart(t, tg, 11, map[int64]int64{1: 1})
	p2 := kvPart(t, tg, 12, map[int64]int64{2: 2})
	p3 := kvPart(t, tg, 13, map[int64]int64{3: 3})
	if err := tg.Stream(ctx, p1); err != nil {
		t.Fatal(err)
	}
	f.Inject(starrocksfake.OpLoad, starrocksfake.HTTP500)
	if err := tg.Stream(ctx, p2); err == nil {
		t.Fatal("a part whose load was answered 500 streamed")
	}
	if err := tg.Stream(ctx, p3); err == nil {
		t.Fatal("a part after a failed one streamed")
	}
	u := kvUnit(t, tg, 14, 4)
	u.Parts = []*commit.Unit{p1, p2, p3}
	if err := tg.Apply(ctx, u); err != nil {
		t.Fatal(err)
	}
	if got, want := c.kvRows(t), map[int64]int64{1: 1, 2: 2, 3: 3, 4: 40}; !sameRows(got, want) {
		t.Errorf("a reader sees %v, want %v", got, want)
	}
}

// TestStreamOtherPartsRolledBack: an open transaction holding parts the
// unit does not list (streamed for a unit a restart dropped) is rolled
// back at Apply, and none of its rows land; Close rolls back one left
// open.
func TestStreamOtherPartsRolledBack(t *testing.T) {
	ctx := context.Background()
	c := kvCluster(t)
	tg := c.target(t, 0)
	stale := kvPart(t, tg, 11, map[int64]int64{1: 1})
	if err := tg.Stream(ctx, stale); err != nil {
		t.Fatal(err)
	}
	if err := tg.Apply(ctx, kvUnit(t, tg, 11, 5)); err != nil {
		t.Fatal(err)
	}
	if got, want := c.kvRows(t), map[int64]int64{5: 50}; !sameRows(got, want) {
		t.Errorf("a reader sees %v, want %v", got, want)
	}
	left := kvPart(t, tg, 12, map[int64]int64{2: 2})
	if err := tg.Stream(ctx, left); err != nil {
		t.Fatal(err)
	}
	label := tg.open["pipe"].x.Label
	tg.Close()
	if c.fake != nil {
		if s := c.fake.LabelState(label); s != "ABORTED" {
			t.Errorf("the transaction left open is %s after Close, want ABORTED", s)
		}
	}
}

// TestStreamPartialImageAfterPart: a partial image (partial_update) of a
// key an earlier part of the same open transaction inserted finds it —
// the look-up of stored rows counts what the transaction's earlier parts
// loaded — and keeps its other columns from that load; one of a key an
// earlier part deleted is refused as a missing row, naming the key.
func TestStreamPartialImageAfterPart(t *testing.T) {
	ctx := context.Background()
	c := realOrFake(t, starrocksfake.Options{}).withTables(t)
	c.ddl(t, "CREATE TABLE wide (id BIGINT NOT NULL, a BIGINT, b BIGINT) PRIMARY KEY (id) DISTRIBUTED BY HASH(id)")
	tg := c.target(t, 0)
	st, err := tg.Describe(ctx, schema.Name{Name: "wide"})
	if err != nil {
		t.Fatal(err)
	}
	pos := changelog.Position{Partition: "p0", Offset: 5, Seq: 5}
	full := func(rows ...[]any) *commit.Unit {
		g := commit.Group{Columns: []string{"id", "a", "b"}, Rows: rows}
		for range rows {
			g.Pos = append(g.Pos, pos)
		}
		return &commit.Unit{Pipeline: "pipe", Batches: []*commit.Batch{{Table: st, Upserts: []commit.Group{g}}}}
	}
	partial := func(off int64, id, a int64) *commit.Unit {
		p := changelog.Position{Partition: "p0", Offset: off, Seq: off}
		g := commit.Group{Columns: []string{"id", "a"}, Rows: [][]any{{id, a}}, Pos: []changelog.Position{p}, Partial: true}
		return &commit.Unit{Pipeline: "pipe", Batches: []*commit.Batch{{Table: st, Upserts: []commit.Group{g}}},
			Progress: []changelog.Position{p}}
	}
	committed := full([]any{int64(2), int64(2), int64(2)})
	committed.Progress = []changelog.Position{pos}
	if err := tg.Apply(ctx, committed); err != nil {
		t.Fatal(err)
	}
	p1 := full([]any{int64(1), int64(1), int64(1)})
	if err := tg.Stream(ctx, p1); err != nil {
		t.Fatal(err)
	}
	u := partial(6, 1, 9)
	u.Parts = []*commit.Unit{p1}
	if err := tg.Apply(ctx, u); err != nil {
		t.Fatalf("a partial image of a key an earlier part inserted: %v", err)
	}
	var a, b int64
	if err := c.SQL.QueryRow("SELECT a, b FROM wide WHERE id = 1").Scan(&a, &b); err != nil || a != 9 || b != 1 {
		t.Errorf("row 1 is a=%d b=%d (%v), want a=9 b=1", a, b, err)
	}

	del := &commit.Unit{Pipeline: "pipe", Batches: []*commit.Batch{{Table: st, Deletes: [][]any{{int64(2)}}, DeletePos: []changelog.Position{pos}}}}
	if err := tg.Stream(ctx, del); err != nil {
		t.Fatal(err)
	}
	u = partial(7, 2, 9)
	u.Parts = []*commit.Unit{del}
	err = tg.Apply(ctx, u)
	var se *sink.Error
	if !errors.Is(err, sink.ErrMissingRow) || !errors.As(err, &se) || se.Key != "(2)" {
		t.Fatalf("a partial image of a key an earlier part deleted: %v, want ErrMissingRow naming key (2)", err)
	}
	if n := c.count(t, "SELECT COUNT(*) FROM wide WHERE id = 2"); n != 1 {
		t.Errorf("row 2: %d rows after the refused unit, want it still there", n)
	}
}

// TestStreamSoftDeleteAfterPart: a soft delete (a partial update of the
// key's delete column, left out for a key not stored) of a key an earlier
// part of the open transaction inserted marks that row: the look-up
// counts what the earlier parts loaded.
func TestStreamSoftDeleteAfterPart(t *testing.T) {
	ctx := context.Background()
	c := realOrFake(t, starrocksfake.Options{}).withTables(t)
	c.ddl(t, `CREATE TABLE sb (id BIGINT NOT NULL, val VARCHAR(10) NOT NULL, deleted BOOLEAN NOT NULL DEFAULT "false") PRIMARY KEY (id) DISTRIBUTED BY HASH(id)`)
	tg := c.target(t, 0)
	st, err := tg.Describe(ctx, schema.Name{Name: "sb"})
	if err != nil {
		t.Fatal(err)
	}
	rules := commit.Rules{SoftDelete: "deleted"}
	pos := changelog.Position{Partition: "p0", Offset: 5, Seq: 5}
	p1 := &commit.Unit{Pipeline: "pipe", Batches: []*commit.Batch{{Table: st, Rules: rules,
		Upserts: []commit.Group{{Columns: []string{"id", "val", "deleted"}, Rows: [][]any{{int64(1), "a", false}}, Pos: []changelog.Position{pos}}}}}}
	if err := tg.Stream(ctx, p1); err != nil {
		t.Fatal(err)
	}
	u := &commit.Unit{Pipeline: "pipe", Parts: []*commit.Unit{p1}, Progress: []changelog.Position{{Partition: "p0", Offset: 6, Seq: 6}},
		Batches: []*commit.Batch{{Table: st, Rules: rules, Deletes: [][]any{{int64(1)}, {int64(2)}},
			DeletePos: []changelog.Position{pos, pos}, SoftValues: []any{true, true}}}}
	if err := tg.Apply(ctx, u); err != nil {
		t.Fatal(err)
	}
	if got := c.count(t, "SELECT COUNT(*) FROM sb WHERE id = 1 AND deleted"); got != 1 {
		t.Errorf("row 1 marked deleted: %d, want 1 (the soft delete of a row an earlier part inserted)", got)
	}
	if got := c.count(t, "SELECT COUNT(*) FROM sb"); got != 1 {
		t.Errorf("%d rows, want 1 (the soft delete of key 2, stored nowhere, is left out)", got)
	}
}
