package reduce

import (
	"fmt"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/format/debezium"
)

// TestNarrowedBeforeImages: with the decoder told each table's key, as
// the engine tells it (an update's before image read for its key alone),
// an update that changes the key still deletes the old key and upserts
// the new one, at the update's version, and a delete, whose before image
// stays whole, is guarded by the version its image carries.
func TestNarrowedBeforeImages(t *testing.T) {
	tbl := rulesTable(t)
	if err := tbl.SetRules(commit.Rules{Version: "v"}, false); err != nil {
		t.Fatal(err)
	}
	src := changelog.Table{Namespace: "s", Name: "r"}
	for _, told := range []bool{false, true} {
		t.Run(fmt.Sprint("told ", told), func(t *testing.T) {
			dec, err := debezium.New(nil)
			if err != nil {
				t.Fatal(err)
			}
			if told {
				dec.NarrowBefore(src, tbl.Key)
			}
			rec := func(op, before, after string) []byte {
				return []byte(`{"before":` + before + `,"after":` + after + `,"source":{"db":"s","table":"r"},"op":"` + op + `"}`)
			}
			b := NewBuffer("p")
			for i, r := range [][]byte{
				rec("u", `{"id":1,"v":1,"name":"a","at":null,"at_nn":"2026-01-01 00:00:00.000","gone":false}`, `{"id":2,"v":2,"name":"a","at":null,"at_nn":"2026-01-01 00:00:00.000","gone":false}`),
				rec("u", `{"id":3,"v":1,"name":"c","at":null,"at_nn":"2026-01-01 00:00:00.000","gone":false}`, `{"id":3,"v":5,"name":"C","at":null,"at_nn":"2026-01-01 00:00:00.000","gone":false}`),
				rec("d", `{"id":4,"v":9,"name":"d","at":null,"at_nn":"2026-01-01 00:00:00.000","gone":false}`, "null"),
			} {
				pos := changelog.Position{Partition: "p0", Offset: int64(i + 1), Seq: int64(i + 1)}
				cs, err := dec.Decode(r, pos)
				if err != nil {
					t.Fatal(err)
				}
				if told && cs[0].Kind == changelog.UpdateAfter && cs[0].Before.Len() != 1 {
					t.Errorf("record %d: Before = %v, want the key alone", i, cs[0].Before)
				}
				if err := b.Add(tbl, &cs[0], t0); err != nil {
					t.Fatal(err)
				}
			}
			u := b.Take()
			got := describe(u)
			for _, want := range []string{"DELETE r [1]", "DELETE r [4]", "UPSERT r [2 2 a", "UPSERT r [3 5 C"} {
				if !strings.Contains(got, want) {
					t.Errorf("unit %s lacks %s", got, want)
				}
			}
			if strings.Count(got, "DELETE") != 2 {
				t.Errorf("unit %s: want two deletes", got)
			}
			bt := u.Batches[0]
			if fmt.Sprint(bt.DeleteVersions) != "[2 9]" {
				t.Errorf("delete versions %v of %v, want [2 9]: the moved key's at its update's, the delete's at its image's", bt.DeleteVersions, bt.Deletes)
			}
		})
	}
}
