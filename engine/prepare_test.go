package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/internal/testdb"
)

// TestPreparedUnit: the unit prepare reduces from the machine's finished
// transactions is the one the next plan gets when the plan holds exactly
// those, and is set aside when it does not (a transaction ended since);
// either way the unit is what reducing the plan gives.
func TestPreparedUnit(t *testing.T) {
	for _, tc := range []struct {
		name      string
		more      int  // transactions stepped between prepare and the plan
		preparedU bool // the plan's unit is the prepared one
	}{
		{"the plan holds what was prepared", 0, true},
		{"a transaction ended since", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := testdb.SQLite(t)
			db.Exec(t, `CREATE TABLE prepared (id INTEGER NOT NULL PRIMARY KEY, v INTEGER NOT NULL)`)
			cfg := config.Default()
			cfg.Name = "prepared"
			cfg.Source = config.Source{Type: "file", Format: "txsink-json"}
			cfg.Target.URL = db.URL
			cfg.Tables = []config.Table{{Source: "s.prepared"}}
			cfg.Sink.TxnEnabled = true
			cfg.Sink.FlushMaxRows = 1 << 20
			e, err := New(ctx, &cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { e.Close() })
			l, err := e.newTxnLoop()
			if err != nil {
				t.Fatal(err)
			}
			seq := int64(0)
			step := func(txns int) {
				t.Helper()
				for range txns {
					for _, part := range []string{"p0", "p1"} {
						seq++
						// Keys repeat, so the unit reduces them.
						c := changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Namespace: "s", Name: "prepared"},
							After: changelog.RowOf("id", seq%5, "v", seq), TxnID: fmt.Sprint("t", seq), TxnEnd: true,
							Pos: changelog.Position{Partition: part, Offset: seq, Seq: seq}, Size: 10}
						if err := l.record(ctx, decoded{pos: c.Pos, changes: []changelog.Change{c}}); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			step(4)
			l.prepare(ctx)
			if l.prepared == nil {
				t.Fatal("nothing prepared from 8 finished transactions")
			}
			prepared := l.prepared.u
			step(tc.more)
			plan := l.m.Ready(time.Now(), true)
			if plan == nil {
				t.Fatal("no plan")
			}
			u, txns, err := l.unit(ctx, plan)
			if err != nil {
				t.Fatal(err)
			}
			if (u == prepared) != tc.preparedU {
				t.Errorf("the plan's unit is the prepared one: %v, want %v", u == prepared, tc.preparedU)
			}
			if txns != plan.Txns {
				t.Errorf("%d transactions, want the plan's %d", txns, plan.Txns)
			}
			want, _, err := l.reduce(ctx, plan.Chunks)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := describeUnit(u), describeUnit(want); got != want {
				t.Errorf("unit:\n%s\nwant what reducing the plan gives:\n%s", got, want)
			}
			if l.prepared != nil {
				t.Errorf("the prepared unit is kept after the plan took its own")
			}
		})
	}
}

// describeUnit renders what a unit writes and how far it moves progress.
func describeUnit(u *commit.Unit) string {
	s := fmt.Sprintf("changes %d, progress %v", u.Changes, u.Progress)
	for _, b := range u.Batches {
		s += fmt.Sprintf("\n%+v", *b)
	}
	return s
}
