package starrocks

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
)

// TestProgressInTheDataTransaction: the progress rows commit with the data
// or not at all, a unit's label lands once, and a rolled-back unit leaves
// neither data nor progress.
func TestProgressInTheDataTransaction(t *testing.T) {
	cl := newCluster(t)
	cl.ddl(t, ProgressDDL, ordersDDL)
	c := cl.client(t)
	ctx := context.Background()
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	long := strings.Repeat("/very/long/path", 40) + ".jsonl" // longer than a StarRocks key may be
	unit := func(seq int64, id string, pos []changelog.Position, commit bool) error {
		label := Label("pipe", 3, seq)
		x, err := c.Begin(ctx, label)
		if err != nil {
			return err
		}
		load(t, x, "orders", orderCols, `[{"id":`+id+`,"__op":0}]`)
		epochs := map[string]int64{"a.jsonl": 3, long: 3}
		p, err := ProgressLoad("pipe", label, pos, epochs, map[string]string{"a.jsonl": "mark-a"}, now)
		if err != nil {
			t.Fatal(err)
		}
		load(t, x, ProgressTable, p.Columns, string(p.Body))
		if !commit {
			return x.Rollback(ctx)
		}
		return x.Commit(ctx)
	}
	if err := unit(1, "1", []changelog.Position{{Partition: "a.jsonl", Offset: 100, Seq: 3}, {Partition: long, Offset: 7, Seq: 1}}, true); err != nil {
		t.Fatal(err)
	}
	if err := unit(2, "2", []changelog.Position{{Partition: "a.jsonl", Offset: 200, Seq: 6}}, false); err != nil {
		t.Fatal(err)
	}
	got, err := ReadProgress(ctx, cl.SQL, "pipe")
	if err != nil {
		t.Fatal(err)
	}
	if a := got["a.jsonl"]; a.Offset != 100 || a.Seq != 3 || a.Epoch != 3 || a.Mark != "mark-a" || a.Label != Label("pipe", 3, 1) || got[long].Offset != 7 || got[long].Mark != "" || len(got) != 2 {
		t.Fatalf("progress %+v", got)
	}
	if n := cl.count(t, "SELECT COUNT(*) FROM orders"); n != 1 {
		t.Fatalf("%d orders, want 1: the rolled back unit left data", n)
	}
	// The committed unit's label cannot land twice.
	err = unit(1, "1", []changelog.Position{{Partition: "a.jsonl", Offset: 100, Seq: 3}}, true)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeLabelAlreadyExists {
		t.Fatalf("the same unit again: %v, want LABEL_ALREADY_EXISTS", err)
	}
	if other, _ := ReadProgress(ctx, cl.SQL, "other"); len(other) != 0 {
		t.Errorf("another pipeline's progress: %v", other)
	}
	if l := Label(strings.Repeat("p", 500), 1<<40, 1<<50); len(l) > 128 || strings.ContainsAny(l, " /.") {
		t.Errorf("label %q", l)
	}
}
