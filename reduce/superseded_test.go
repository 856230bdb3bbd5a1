package reduce

import (
	"errors"
	"testing"

	"github.com/txsink/txsink/changelog"
)

// TestSupersededValuesAreChecked: a value its column cannot hold is
// refused when its change is added, whether or not a later change of the
// same key would supersede it in the unit, and whether or not a flush
// falls between them. Checking only the values that reach the target would
// make a refusal depend on where a flush boundary fell (README, "Values").
// A refused change leaves the buffer as it was: what the unit writes is
// the last accepted change of each key.
func TestSupersededValuesAreChecked(t *testing.T) {
	tables := benchSchema(t)
	orders := changelog.Table{Namespace: "shop", Name: "orders"}
	row := func(status, amount string) changelog.Row {
		return changelog.RowOf("id", changelog.Number("7"), "customer", "c7", "status", status,
			"amount", changelog.Number(amount), "created_at", "2026-11-01 09:00:00.000", "note", nil)
	}
	good, tooLong, tooPrecise := row("PAID", "9.50"), row("PAID-AND-SHIPPED-TWICE", "9.50"), row("PAID", "9.505")
	type step struct {
		kind changelog.Kind
		img  changelog.Row
		bad  bool // Add refuses it
	}
	for _, tc := range []struct {
		name  string
		steps []step
		// status is the status the unit writes for key 7, "" for a delete.
		status string
	}{
		{"a bad value superseded by a good one", []step{{changelog.Insert, tooLong, true}, {changelog.UpdateAfter, good, false}}, "PAID"},
		{"a good value, then a bad one that would supersede it", []step{{changelog.Insert, good, false}, {changelog.UpdateAfter, tooPrecise, true}}, "PAID"},
		{"a bad value, then a delete of its key", []step{{changelog.Insert, good, false}, {changelog.UpdateAfter, tooPrecise, true}, {changelog.Delete, good, false}}, ""},
		{"the last value bad", []step{{changelog.Insert, good, false}, {changelog.UpdateAfter, good, false}, {changelog.UpdateAfter, tooLong, true}}, "PAID"},
	} {
		for _, flush := range []bool{false, true} {
			name := tc.name
			if flush {
				name += ", a flush after each change"
			}
			t.Run(name, func(t *testing.T) {
				buf := NewBuffer("superseded")
				var units []string // the status each unit writes for the key
				take := func() {
					u := buf.Take()
					if u == nil {
						return
					}
					for _, b := range u.Batches {
						for range b.Deletes {
							units = append(units, "")
						}
						for _, g := range b.Upserts {
							for _, r := range g.Rows {
								for i, c := range g.Columns {
									if c == "status" {
										units = append(units, r[i].(string))
									}
								}
							}
						}
					}
				}
				for i, s := range tc.steps {
					c := changelog.Change{Kind: s.kind, Table: orders, Pos: changelog.Position{Partition: "p", Offset: int64(i + 1), Seq: int64(i + 1)}}
					if s.kind == changelog.Delete {
						c.Before = s.img
					} else {
						c.After = s.img
					}
					err := buf.Add(tables[orders], &c, t0)
					var re *Error
					if s.bad != (err != nil) || (err != nil && (!errors.As(err, &re) || re.Column == "")) {
						t.Fatalf("step %d: Add = %v, want a refusal naming the column: %v", i, err, s.bad)
					}
					if flush {
						take()
					}
				}
				take()
				if len(units) == 0 || units[len(units)-1] != tc.status {
					t.Errorf("the units write %q for key 7, want %q last", units, tc.status)
				}
			})
		}
	}
}
