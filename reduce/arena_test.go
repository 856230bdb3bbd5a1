package reduce

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/format/debezium"
)

// TestBufferOutlivesArena checks the rule the engine's plain loop relies
// on when it recycles the arena a batch was decoded into (see
// changelog.Arena): once a change is added, the buffer holds nothing of
// the arena's. Records are decoded into one arena, added, and the arena
// is reset every few records and overwritten with records of other
// values; the units taken must equal those of the same records decoded
// on the heap.
func TestBufferOutlivesArena(t *testing.T) {
	dec, err := debezium.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	order := func(id int, status string) string {
		return fmt.Sprintf(`{"id":%d,"customer":"c%d","status":"%s","amount":%d.%02d,"created_at":"2026-11-01 09:00:%02d.000","note":"n\u00e9 %d"}`,
			id, id, status, id, id%100, id%60, id)
	}
	var recs [][]byte
	for i := 1; i <= 40; i++ {
		txn := fmt.Sprint("t", i)
		recs = append(recs, benchRecord(nil, "c", "orders", "null", order(i, "NEW"), txn, 1))
		item := fmt.Sprintf(`{"order_id":%d,"line_no":1,"sku":"SKU-%d","qty":%d,"price":%d.50}`, i, i, i, i)
		recs = append(recs, benchRecord(nil, "c", "order_items", "null", item, txn, 2))
		switch i % 4 {
		case 0:
			recs = append(recs, benchRecord(nil, "d", "orders", order(i-1, "NEW"), "null", txn, 3))
		case 1:
			recs = append(recs, benchRecord(nil, "u", "orders", order(i, "NEW"), order(i, "PAID"), txn, 3))
		case 2:
			// A key change: the old key becomes a delete.
			recs = append(recs, benchRecord(nil, "u", "orders", order(i, "NEW"), order(1000+i, "MOVED"), txn, 3))
		}
		recs = append(recs, []byte(`{"status":"END","id":"`+txn+`","event_count":3,"data_collections":null,"ts_ms":1}`))
	}
	// poison holds records of other values, decoded into the arena after
	// each reset so that its memory is written again.
	var poison [][]byte
	for i := 0; i < 8; i++ {
		poison = append(poison, benchRecord(nil, "u", "orders", order(900000+i, "XXXXXXXX"), order(800000+i, "YYYYYYYYYYYY"), "tp", 1))
	}

	keyed := benchSchema(t)
	appendOnly := map[changelog.Table]*Table{}
	for name, tbl := range keyed {
		ao, err := NewTable(tbl.Schema, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		appendOnly[name] = ao
	}
	for _, tc := range []struct {
		name   string
		tables map[changelog.Table]*Table
		only   func(changelog.Kind) bool
	}{
		{"keyed", keyed, func(changelog.Kind) bool { return true }},
		{"append-only", appendOnly, func(k changelog.Kind) bool { return k == changelog.Insert }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(mem *changelog.Arena) []*commit.Unit {
				b := NewBuffer("p")
				var units []*commit.Unit
				for i, rec := range recs {
					if mem != nil && i%3 == 0 {
						mem.Reset()
						for _, p := range poison {
							if _, err := dec.DecodeIn(mem, p, changelog.Position{Partition: "x"}); err != nil {
								t.Fatal(err)
							}
						}
					}
					pos := changelog.Position{Partition: "p", Offset: int64(i + 1), Seq: int64(i + 1)}
					cs, err := dec.DecodeIn(mem, rec, pos)
					if err != nil {
						t.Fatalf("record %d: %v", i, err)
					}
					for j := range cs {
						if cs[j].Kind == changelog.EndTxn || !tc.only(cs[j].Kind) {
							b.Skip(pos, t0)
							continue
						}
						if err := b.Add(tc.tables[cs[j].Table], &cs[j], t0); err != nil {
							t.Fatalf("record %d: %v", i, err)
						}
					}
					if i%50 == 49 {
						units = append(units, b.Take())
					}
				}
				mem.Reset()
				for _, p := range poison {
					if _, err := dec.DecodeIn(mem, p, changelog.Position{Partition: "x"}); err != nil {
						t.Fatal(err)
					}
				}
				return append(units, b.Take())
			}
			want := run(nil)
			got := run(new(changelog.Arena))
			if len(got) != len(want) {
				t.Fatalf("%d units, want %d", len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("unit %d of records decoded into a recycled arena differs from the heap's:\n got %s\nwant %s", i, unitText(got[i]), unitText(want[i]))
				}
			}
		})
	}
}

// unitText renders a unit's rows for a failure message.
func unitText(u *commit.Unit) string {
	if u == nil {
		return "<nil>"
	}
	var b strings.Builder
	for _, bt := range u.Batches {
		fmt.Fprintf(&b, "%s: deletes %v", bt.Table, bt.Deletes)
		for _, g := range bt.Upserts {
			fmt.Fprintf(&b, " upserts %v", g.Rows)
		}
		for _, g := range bt.Inserts {
			fmt.Fprintf(&b, " inserts %v", g.Rows)
		}
		b.WriteString("; ")
	}
	return b.String()
}
