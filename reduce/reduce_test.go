package reduce

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/schema"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func ordersTable(t testing.TB) *Table {
	t.Helper()
	st := &schema.Table{Name: "orders", PrimaryKey: []string{"id"}, Columns: []schema.Column{
		{Name: "id", Class: schema.Int, Bits: 64},
		{Name: "amount", Class: schema.Decimal, Precision: 10, Scale: 2},
		{Name: "status", Class: schema.String, Length: 16, Nullable: true},
	}}
	rt, err := NewTable(st, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

var row = changelog.RowOf

// ch builds a change of order 1001 from the seed's example.
func ch(kind changelog.Kind, amount, status string, seq int64) changelog.Change {
	img := row("id", changelog.Number("1001"), "amount", changelog.Number(amount), "status", status)
	c := changelog.Change{Kind: kind, Table: changelog.Table{Name: "orders"}, Pos: changelog.Position{Partition: "p0", Offset: seq * 10, Seq: seq}, Size: 50}
	if kind.Upserts() {
		c.After = img
	} else {
		c.Before = img
	}
	return c
}

// describe renders a unit as text for comparisons: deletes, then upserts.
func describe(u *commit.Unit) string {
	if u == nil {
		return "<nothing>"
	}
	var parts []string
	for _, b := range u.Batches {
		for _, k := range b.Deletes {
			parts = append(parts, fmt.Sprintf("DELETE %s %v", b.Table.Name, k))
		}
		for _, g := range b.Upserts {
			for _, r := range g.Rows {
				parts = append(parts, fmt.Sprintf("UPSERT %s %v", b.Table.Name, r))
			}
		}
		for _, g := range b.Inserts {
			for _, r := range g.Rows {
				parts = append(parts, fmt.Sprintf("INSERT %s %v", b.Table.Name, r))
			}
		}
	}
	for _, p := range u.Progress {
		parts = append(parts, "PROGRESS "+p.String())
	}
	return strings.Join(parts, "; ")
}

// TestSeed000Section9 is the table of seed 000 §9: within one buffer only
// the last action of a key survives.
func TestSeed000Section9(t *testing.T) {
	ins := ch(changelog.Insert, "80.00", "CREATED", 1)
	upd := ch(changelog.UpdateAfter, "100.00", "PAID", 2)
	del := ch(changelog.Delete, "100.00", "PAID", 3)
	tests := []struct {
		name    string
		changes []changelog.Change
		want    string
	}{
		{"+I -> +U", []changelog.Change{ins, upd}, "UPSERT orders [1001 100.00 PAID]; PROGRESS p0:2"},
		{"+I -> -D", []changelog.Change{ins, at(del, 2)}, "DELETE orders [1001]; PROGRESS p0:2"},
		{"-D -> +I", []changelog.Change{at(del, 1), at(ch(changelog.Insert, "100.00", "PAID", 0), 2)}, "UPSERT orders [1001 100.00 PAID]; PROGRESS p0:2"},
		{"+U -> -D", []changelog.Change{at(upd, 1), at(del, 2)}, "DELETE orders [1001]; PROGRESS p0:2"},
		{"-D -> +I -> +U", []changelog.Change{at(del, 1), at(ins, 2), at(upd, 3)}, "UPSERT orders [1001 100.00 PAID]; PROGRESS p0:3"},
		// A -U whose +U has not come is not committed past: the +U
		// that follows may move the key (see TestRetractions).
		{"lone -U", []changelog.Change{ch(changelog.UpdateBefore, "80.00", "CREATED", 1)}, ""},
		{"+I -> -U", []changelog.Change{ins, ch(changelog.UpdateBefore, "80.00", "CREATED", 2)}, "UPSERT orders [1001 80.00 CREATED]; PROGRESS p0:1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tbl := ordersTable(t)
			b := NewBuffer("p")
			for i := range tc.changes {
				if err := b.Add(tbl, &tc.changes[i], t0); err != nil {
					t.Fatal(err)
				}
			}
			if got := describe(b.Take()); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if !b.Empty() || b.Rows() != 0 || b.Bytes() != 0 {
				t.Errorf("buffer not empty after Take: rows %d bytes %d", b.Rows(), b.Bytes())
			}
		})
	}
}

func at(c changelog.Change, seq int64) changelog.Change {
	c.Pos.Seq, c.Pos.Offset = seq, seq*10
	return c
}

// TestSeed000Section11 reproduces the flush boundary of seed 000 §11: a
// -D and a +I of one key that fall into two flushes become a DELETE and
// then an UPSERT, and a lone -U at a boundary deletes nothing.
func TestSeed000Section11(t *testing.T) {
	tbl := ordersTable(t)
	b := NewBuffer("p")
	policy := Policy{MaxRows: 1}
	d := ch(changelog.Delete, "80.00", "CREATED", 1)
	if err := b.Add(tbl, &d, t0); err != nil {
		t.Fatal(err)
	}
	if r := b.Due(t0, policy); r != MaxRows {
		t.Fatalf("Due = %v, want max-rows", r)
	}
	if got, want := describe(b.Take()), "DELETE orders [1001]; PROGRESS p0:1"; got != want {
		t.Errorf("batch A: got %s, want %s", got, want)
	}
	i := ch(changelog.Insert, "100.00", "CREATED", 2)
	if err := b.Add(tbl, &i, t0); err != nil {
		t.Fatal(err)
	}
	if got, want := describe(b.Take()), "UPSERT orders [1001 100.00 CREATED]; PROGRESS p0:2"; got != want {
		t.Errorf("batch B: got %s, want %s", got, want)
	}
	u := ch(changelog.UpdateBefore, "100.00", "CREATED", 3)
	if err := b.Add(tbl, &u, t0); err != nil {
		t.Fatal(err)
	}
	// Nothing deleted, and progress not past the -U: its +U may follow.
	if got, want := describe(b.Take()), ""; got != want {
		t.Errorf("lone -U: got %s, want %s", got, want)
	}
}

func TestKeyChangeDeletesOldKey(t *testing.T) {
	tbl := ordersTable(t)
	b := NewBuffer("p")
	c := changelog.Change{Kind: changelog.UpdateAfter, Table: changelog.Table{Name: "orders"},
		Before: row("id", changelog.Number("1"), "amount", changelog.Number("1.00"), "status", "A"),
		After:  row("id", changelog.Number("2"), "amount", changelog.Number("1.00"), "status", "A"),
		Pos:    changelog.Position{Partition: "p0", Offset: 1, Seq: 1}}
	if err := b.Add(tbl, &c, t0); err != nil {
		t.Fatal(err)
	}
	if got, want := describe(b.Take()), "DELETE orders [1]; UPSERT orders [2 1.00 A]; PROGRESS p0:1"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestKeysCompareAsTheTargetDoes(t *testing.T) {
	st := &schema.Table{Name: "users", PrimaryKey: []string{"tenant", "name"}, Columns: []schema.Column{
		{Name: "tenant", Class: schema.Int, Bits: 32},
		{Name: "name", Class: schema.String, Compare: schema.Compare{Fold: schema.FoldLower}},
		{Name: "v", Class: schema.Int, Bits: 32, Nullable: true},
	}}
	tbl, err := NewTable(st, []string{"tenant", "name"}, false)
	if err != nil {
		t.Fatal(err)
	}
	b := NewBuffer("p")
	for i, img := range []changelog.Row{
		row("tenant", changelog.Number("7"), "name", "ABC", "v", changelog.Number("1")),
		row("tenant", "7", "name", "abc", "v", changelog.Number("2")),        // same key: "7" and 7, ABC and abc
		row("tenant", changelog.Number("8"), "name", "abc", "v", nil),        // other tenant
		row("tenant", changelog.Number("7.0"), "name", "Abc", "v", int64(3)), // 7.0 is 7
	} {
		c := changelog.Change{Kind: changelog.Insert, After: img, Pos: changelog.Position{Partition: "p", Offset: int64(i + 1), Seq: int64(i + 1)}}
		if err := b.Add(tbl, &c, t0); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := describe(b.Take()), "UPSERT users [7 Abc 3]; UPSERT users [8 abc <nil>]; PROGRESS p:4"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestRefusals(t *testing.T) {
	tbl := ordersTable(t)
	pos := changelog.Position{Partition: "in.jsonl", Offset: 99, Seq: 7}
	tests := []struct {
		name   string
		change changelog.Change
		want   []string
	}{
		{"missing key", changelog.Change{Kind: changelog.Insert, After: row("amount", changelog.Number("1.00"))}, []string{"in.jsonl:7", "orders", "lacks key column id"}},
		{"delete without key", changelog.Change{Kind: changelog.Delete, Before: row("status", "x")}, []string{"in.jsonl:7", "lacks key column id"}},
		{"null key", changelog.Change{Kind: changelog.Insert, After: row("id", nil, "amount", changelog.Number("1"))}, []string{"column id", "NULL"}},
		{"too many decimals", changelog.Change{Kind: changelog.Insert, After: row("id", changelog.Number("5"), "amount", changelog.Number("1.234"))}, []string{"in.jsonl:7", "key (5)", "column amount"}},
		{"string too long", changelog.Change{Kind: changelog.Insert, After: row("id", changelog.Number("5"), "amount", changelog.Number("1"), "status", "12345678901234567")}, []string{"column status", "key (5)"}},
		{"unknown column", changelog.Change{Kind: changelog.Insert, After: row("id", changelog.Number("5"), "colour", "red")}, []string{"column colour", "does not have"}},
		{"no image", changelog.Change{Kind: changelog.Insert}, []string{"no row image"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBuffer("p")
			tc.change.Pos = pos
			err := b.Add(tbl, &tc.change, t0)
			var re *Error
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want *reduce.Error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if re.Hint == "" {
				t.Errorf("error has no hint: %v", err)
			}
			if !b.Empty() {
				t.Errorf("refused change left the buffer non-empty")
			}
		})
	}
}

func TestNewTableRefusals(t *testing.T) {
	keyed := &schema.Table{Name: "t", PrimaryKey: []string{"a", "b"}, Columns: []schema.Column{{Name: "a", Class: schema.Int}, {Name: "b", Class: schema.Int}}}
	keyless := &schema.Table{Name: "log", Columns: []schema.Column{{Name: "a", Class: schema.Int}}}
	tests := []struct {
		name       string
		tbl        *schema.Table
		key        []string
		appendOnly bool
		want       string // "" = accepted
	}{
		{"matching key", keyed, []string{"a", "b"}, false, ""},
		{"default key", keyed, nil, false, ""},
		{"key missing a column", keyed, []string{"b"}, false, "differs from the target's PRIMARY KEY"},
		{"key in other order", keyed, []string{"b", "a"}, false, "differs"},
		{"no key, not declared", keyless, nil, false, "append-only: true"},
		{"no key, append-only", keyless, nil, true, ""},
		{"append-only with key", keyed, []string{"a"}, true, "both set"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewTable(tc.tbl, tc.key, tc.appendOnly)
			checkRefusal(t, err, tc.want)
		})
	}
}

func TestAppendOnly(t *testing.T) {
	st := &schema.Table{Name: "events", Columns: []schema.Column{{Name: "id", Class: schema.Int}, {Name: "e", Class: schema.String}}}
	tbl, err := NewTable(st, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	b := NewBuffer("p")
	for i := 1; i <= 3; i++ {
		c := changelog.Change{Kind: changelog.Insert, After: row("id", changelog.Number("1"), "e", fmt.Sprint("x", i)), Pos: changelog.Position{Partition: "p", Seq: int64(i), Offset: int64(i)}}
		if err := b.Add(tbl, &c, t0); err != nil {
			t.Fatal(err)
		}
	}
	u := changelog.Change{Kind: changelog.UpdateAfter, After: row("id", changelog.Number("1"), "e", "y"), Pos: changelog.Position{Partition: "p", Seq: 4, Offset: 4}}
	if err := b.Add(tbl, &u, t0); err == nil || !strings.Contains(err.Error(), "append-only") || !strings.Contains(err.Error(), "p:4") {
		t.Errorf("update on append-only table: err = %v", err)
	}
	if got, want := describe(b.Take()), "INSERT events [1 x1]; INSERT events [1 x2]; INSERT events [1 x3]; PROGRESS p:3"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestDueTriggers(t *testing.T) {
	tbl := ordersTable(t)
	policy := Policy{MaxRows: 3, MaxBytes: 1 << 20, Interval: time.Second}
	b := NewBuffer("p")
	if r := b.Due(t0, policy); r != NotDue {
		t.Fatalf("empty buffer due: %v", r)
	}
	add := func(id int, now time.Time) {
		t.Helper()
		// A record's size does not count: max-bytes bounds the rows'
		// memory (see TestBytesIsTheRowsMemory).
		c := changelog.Change{Kind: changelog.Insert, After: row("id", changelog.Number(fmt.Sprint(id)), "amount", changelog.Number("1")), Size: 1 << 30, Pos: changelog.Position{Partition: "p", Seq: int64(id), Offset: int64(id)}}
		if err := b.Add(tbl, &c, now); err != nil {
			t.Fatal(err)
		}
	}
	add(1, t0)
	if r := b.Due(t0.Add(999*time.Millisecond), policy); r != NotDue {
		t.Errorf("due before interval: %v", r)
	}
	if r := b.Due(t0.Add(time.Second), policy); r != Interval {
		t.Errorf("at interval: %v, want interval", r)
	}
	one := b.Bytes()
	add(1, t0) // same key: still one row, of the same size
	if b.Bytes() != one {
		t.Errorf("Bytes = %d after the same row again, want %d", b.Bytes(), one)
	}
	add(2, t0)
	if r := b.Due(t0, policy); r != NotDue {
		t.Errorf("2 rows due: %v", r)
	}
	add(3, t0)
	if r := b.Due(t0, policy); r != MaxRows {
		t.Errorf("3 rows: %v, want max-rows", r)
	}
	b.Take()
	if b.Bytes() != 0 {
		t.Errorf("Bytes = %d after Take, want 0", b.Bytes())
	}
	add(4, t0.Add(5*time.Second))
	add(5, t0.Add(5*time.Second))
	if got := b.Bytes(); got != 2*one {
		t.Errorf("Bytes = %d for two rows of %d", got, one)
	}
	policy.MaxBytes = 2*one + 1
	if r := b.Due(t0.Add(5*time.Second), policy); r != NotDue {
		t.Errorf("a byte under max-bytes: %v, want not due", r)
	}
	policy.MaxBytes = 2 * one
	if r := b.Due(t0.Add(5*time.Second), policy); r != MaxBytes {
		t.Errorf("at max-bytes: %v, want max-bytes", r)
	}
	if got := b.Since(); !got.Equal(t0.Add(5 * time.Second)) {
		t.Errorf("Since = %v, want the first change's time after Take", got)
	}
}

// applyUnit applies u's deletes and upserts to state, keyed by the
// rendered first key value, each row's value made by value, and returns
// the rows u appends to append-only tables.
func applyUnit(state map[string]string, u *commit.Unit, value func(row []any) string) int {
	if u == nil {
		return 0
	}
	inserted := 0
	for _, bt := range u.Batches {
		for _, k := range bt.Deletes {
			delete(state, fmt.Sprint(k[0]))
		}
		for _, g := range bt.Upserts {
			for _, r := range g.Rows {
				state[fmt.Sprint(r[0])] = value(r)
			}
		}
		for _, g := range bt.Inserts {
			inserted += len(g.Rows)
		}
	}
	return inserted
}

// TestAgainstModel checks the buffer against the naive model: replaying
// every change into a map gives the same final state as applying the
// reduced units, whatever the flush points.
func TestAgainstModel(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 1))
		tbl := ordersTable(t)
		b := NewBuffer("p")
		model := map[string]string{}
		applied := map[string]string{}
		// retracted is the key of a -U that the next change may pair
		// with: a +U of another key right after it moves the row.
		retracted := -1
		apply := func(u *commit.Unit) { applyUnit(applied, u, func(r []any) string { return fmt.Sprint(r[1:]) }) }
		for i := 0; i < 300; i++ {
			id := rng.IntN(8)
			amount := fmt.Sprintf("%d.00", rng.IntN(1000))
			kinds := []changelog.Kind{changelog.Insert, changelog.UpdateBefore, changelog.UpdateAfter, changelog.Delete}
			k := kinds[rng.IntN(4)]
			img := row("id", changelog.Number(fmt.Sprint(id)), "amount", changelog.Number(amount), "status", "S")
			c := changelog.Change{Kind: k, Pos: changelog.Position{Partition: "p", Seq: int64(i + 1), Offset: int64(i + 1)}}
			switch k {
			case changelog.Insert, changelog.UpdateAfter:
				c.After = img
				if k == changelog.UpdateAfter && retracted >= 0 && retracted != id {
					delete(model, fmt.Sprint(retracted))
				}
				model[fmt.Sprint(id)] = fmt.Sprint([]any{amount, "S"})
			case changelog.Delete:
				c.Before = img
				delete(model, fmt.Sprint(id))
			case changelog.UpdateBefore:
				c.Before = img
			}
			retracted = -1
			if k == changelog.UpdateBefore {
				retracted = id
			}
			if err := b.Add(tbl, &c, t0); err != nil {
				t.Fatal(err)
			}
			if rng.IntN(10) == 0 {
				apply(b.Take())
			}
		}
		apply(b.Take())
		if !reflect.DeepEqual(model, applied) {
			t.Fatalf("seed %d: reduced state differs from model\nmodel   %v\napplied %v", seed, model, applied)
		}
	}
}

// TestKeyEncodingIsUnambiguous checks that keys of several columns whose
// texts run together stay apart: ("a\x00b", "c") is not ("a", "b\x00c").
func TestKeyEncodingIsUnambiguous(t *testing.T) {
	st := &schema.Table{Name: "kv", PrimaryKey: []string{"a", "b"}, Columns: []schema.Column{
		{Name: "a", Class: schema.String},
		{Name: "b", Class: schema.String},
	}}
	tbl, err := NewTable(st, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	b := NewBuffer("p")
	for i, img := range []changelog.Row{
		row("a", "a\x00b", "b", "c"),
		row("a", "a", "b", "b\x00c"),
		row("a", "ab", "b", "c"),
		row("a", "a", "b", "bc"),
	} {
		c := changelog.Change{Kind: changelog.Insert, After: img, Pos: changelog.Position{Partition: "p", Seq: int64(i + 1)}}
		if err := b.Add(tbl, &c, t0); err != nil {
			t.Fatal(err)
		}
	}
	if b.Rows() != 4 {
		t.Errorf("4 distinct keys became %d rows", b.Rows())
	}
}

// TestReusedNamesSlice checks that a caller reusing one Names slice for
// rows of other columns gets each row converted by its own columns: plans
// are found by the names' content, not by the slice.
func TestReusedNamesSlice(t *testing.T) {
	tbl := ordersTable(t)
	b := NewBuffer("p")
	names := []string{"id", "amount", "status"}
	c := changelog.Change{Kind: changelog.Insert, After: changelog.Row{Names: names, Values: []changelog.Value{changelog.Number("1"), changelog.Number("2.00"), "A"}},
		Pos: changelog.Position{Partition: "p", Seq: 1}}
	if err := b.Add(tbl, &c, t0); err != nil {
		t.Fatal(err)
	}
	names[1], names[2] = "status", "amount"
	c = changelog.Change{Kind: changelog.Insert, After: changelog.Row{Names: names, Values: []changelog.Value{changelog.Number("2"), "B", changelog.Number("3.00")}},
		Pos: changelog.Position{Partition: "p", Seq: 2}}
	if err := b.Add(tbl, &c, t0); err != nil {
		t.Fatal(err)
	}
	if got, want := describe(b.Take()), "UPSERT orders [1 2.00 A]; UPSERT orders [2 3.00 B]; PROGRESS p:2"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestTakenUnitsStayIntact checks that a unit is not changed by what later
// buffers do: buffers reuse a table's state after Take, never the rows.
func TestTakenUnitsStayIntact(t *testing.T) {
	tbl := ordersTable(t)
	add := func(b *Buffer, id int, amount string) {
		t.Helper()
		c := changelog.Change{Kind: changelog.Insert, After: row("id", changelog.Number(fmt.Sprint(id)), "amount", changelog.Number(amount)),
			Pos: changelog.Position{Partition: "p", Seq: int64(id)}}
		if err := b.Add(tbl, &c, t0); err != nil {
			t.Fatal(err)
		}
	}
	b1 := NewBuffer("p")
	add(b1, 1, "1.00")
	add(b1, 2, "2.00")
	u := b1.Take()
	want := describe(u)
	b2 := NewBuffer("p") // as transaction mode does, one buffer per unit
	add(b2, 2, "9.00")
	add(b2, 3, "3.00")
	add(b1, 1, "8.00")
	if got := describe(u); got != want {
		t.Errorf("taken unit changed:\nnow  %s\nwas  %s", got, want)
	}
	if got, want := describe(b2.Take()), "UPSERT orders [2 9.00]; UPSERT orders [3 3.00]; PROGRESS p:3"; got != want {
		t.Errorf("second buffer: got %s, want %s", got, want)
	}
	if got, want := describe(b1.Take()), "UPSERT orders [1 8.00]; PROGRESS p:1"; got != want {
		t.Errorf("first buffer after Take: got %s, want %s", got, want)
	}
}

// TestRowKey: equal raw keys hash equal and unequal ones apart; an image
// without a cheap identity says so, and its caller counts it as a row.
func TestRowKey(t *testing.T) {
	pair := func() *Table {
		st := &schema.Table{Name: "pairs", PrimaryKey: []string{"a", "b"}, Columns: []schema.Column{
			{Name: "a", Class: schema.String}, {Name: "b", Class: schema.String}, {Name: "v", Class: schema.Int, Bits: 64, Nullable: true},
		}}
		rt, err := NewTable(st, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}()
	log := func() *Table {
		st := &schema.Table{Name: "log", Columns: []schema.Column{{Name: "id", Class: schema.Int, Bits: 64}}}
		rt, err := NewTable(st, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}()
	orders := ordersTable(t)
	seed := maphash.MakeSeed()
	key := func(tbl *Table, img changelog.Row) (uint64, bool) { return tbl.RowKey(img, seed) }
	for _, tc := range []struct {
		name  string
		tbl   *Table
		a, b  changelog.Row
		equal bool
	}{
		{"same key, other values", orders, row("id", changelog.Number("7"), "amount", changelog.Number("1")), row("amount", changelog.Number("2"), "id", changelog.Number("7")), true},
		{"other key", orders, row("id", changelog.Number("7")), row("id", changelog.Number("8")), false},
		{"int64 keys", orders, row("id", int64(7)), row("id", int64(7)), true},
		{"a number and a string stay apart", orders, row("id", changelog.Number("7")), row("id", "7"), false},
		{"an int64 and a number stay apart", orders, row("id", int64(7)), row("id", changelog.Number("7")), false},
		{"composite key", pair, row("a", "x", "b", "y"), row("b", "y", "a", "x", "v", int64(1)), true},
		{"composite key parts do not run together", pair, row("a", "ab", "b", "c"), row("a", "a", "b", "bc"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ka, oka := key(tc.tbl, tc.a)
			kb, okb := key(tc.tbl, tc.b)
			if !oka || !okb {
				t.Fatalf("no key: %v, %v", oka, okb)
			}
			if (ka == kb) != tc.equal {
				t.Errorf("keys equal = %v, want %v", ka == kb, tc.equal)
			}
		})
	}
	for _, tc := range []struct {
		name string
		tbl  *Table
		img  changelog.Row
	}{
		{"append-only table", log, row("id", int64(1))},
		{"key column missing", pair, row("a", "x")},
		{"NULL key", orders, row("id", nil)},
		{"a type not hashed", orders, row("id", 7.5)},
		{"no image", orders, changelog.Row{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := key(tc.tbl, tc.img); ok {
				t.Errorf("RowKey gave a key to %v", tc.img)
			}
		})
	}
}

// TestMergeIsAddingInTurn checks Merge against adding the same changes to
// one buffer: random changes of three partitions over a keyed and an
// append-only table (inserts, updates that move keys, deletes), reduced
// per partition and merged in partition order, must make the very unit the
// changes make in that order, round after round with the same buffers.
func TestMergeIsAddingInTurn(t *testing.T) {
	orders := ordersTable(t)
	events, err := NewTable(&schema.Table{Name: "events", Columns: []schema.Column{{Name: "id", Class: schema.Int}, {Name: "e", Class: schema.String}}}, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	parts := []string{"p0", "p1", "p2"}
	per := map[string]*Buffer{}
	for _, p := range parts {
		per[p] = NewBuffer("m")
	}
	for seed := uint64(0); seed < 100; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		byPart := map[string][]changelog.Change{}
		for i := range 40 + rng.IntN(40) {
			p := parts[rng.IntN(len(parts))]
			pos := changelog.Position{Partition: p, Seq: int64(i + 1), Offset: int64(i + 1)}
			id := func() changelog.Number { return changelog.Number(fmt.Sprint(rng.IntN(6))) }
			img := func(k changelog.Number) changelog.Row {
				return row("id", k, "amount", changelog.Number(fmt.Sprintf("%d.00", rng.IntN(100))), "status", fmt.Sprint("s", i))
			}
			c := changelog.Change{Pos: pos, Size: int32(10 + rng.IntN(50))}
			switch rng.IntN(5) {
			case 0:
				c.Kind, c.After = changelog.Insert, img(id())
			case 1:
				c.Kind, c.After = changelog.UpdateAfter, img(id())
			case 2: // an update that may move the row to another key
				c.Kind, c.Before, c.After = changelog.UpdateAfter, img(id()), img(id())
			case 3:
				c.Kind, c.Before = changelog.Delete, img(id())
			case 4:
				c.Kind, c.After = changelog.Insert, row("id", id(), "e", fmt.Sprint("x", i))
				c.Table = changelog.Table{Name: "events"}
			}
			byPart[p] = append(byPart[p], c)
		}
		one := NewBuffer("m")
		merged := NewBuffer("m")
		for _, p := range parts {
			for i := range byPart[p] {
				c := &byPart[p][i]
				tbl := orders
				if c.Table.Name == "events" {
					tbl = events
				}
				if err := one.Add(tbl, c, t0.Add(time.Duration(c.Pos.Seq))); err != nil {
					t.Fatal(err)
				}
				if err := per[p].Add(tbl, c, t0.Add(time.Duration(c.Pos.Seq))); err != nil {
					t.Fatal(err)
				}
			}
		}
		// Since is the oldest change's arrival, which one buffer, given
		// the partitions one after the other, does not see first.
		wantRows, wantBytes, wantChanges := one.Rows(), one.Bytes(), one.Changes()
		var wantSince time.Time
		for _, cs := range byPart {
			if at := t0.Add(time.Duration(cs[0].Pos.Seq)); wantSince.IsZero() || at.Before(wantSince) {
				wantSince = at
			}
		}
		for _, p := range parts {
			merged.Merge(per[p])
			if !per[p].Empty() || per[p].Rows() != 0 || per[p].Bytes() != 0 {
				t.Fatalf("seed %d: %s not empty after Merge", seed, p)
			}
		}
		if merged.Rows() != wantRows || merged.Bytes() != wantBytes || merged.Changes() != wantChanges {
			t.Errorf("seed %d: merged rows/bytes/changes %d/%d/%d, want %d/%d/%d", seed,
				merged.Rows(), merged.Bytes(), merged.Changes(), wantRows, wantBytes, wantChanges)
		}
		if !merged.Since().Equal(wantSince) {
			t.Errorf("seed %d: merged since %v, want %v", seed, merged.Since(), wantSince)
		}
		if got, want := describe(merged.Take()), describe(one.Take()); got != want {
			t.Fatalf("seed %d: merged\n%s\nwant\n%s", seed, got, want)
		}
	}
}

// TestDeadLetterReason checks that a quarantined change's reason does not
// tell to run again (the pipeline went on) but to feed it again, and that
// other reasons are kept as they are.
func TestDeadLetterReason(t *testing.T) {
	tests := []struct{ in, want string }{
		{"p:3: table t key (1) column n INT: value NULL cannot go into a NOT NULL column; make the column NULL-able, or have the source send a value, then run again; nothing past the last commit was applied",
			"p:3: table t key (1) column n INT: value NULL cannot go into a NOT NULL column; make the column NULL-able, or have the source send a value, then feed the quarantined change again (txsink dead-letters lists it)"},
		{"the target refused the row: x", "the target refused the row: x"},
	}
	for _, tt := range tests {
		if got := DeadLetterReason(tt.in); got != tt.want {
			t.Errorf("DeadLetterReason(%q)\n = %q\nwant %q", tt.in, got, tt.want)
		}
	}
}
