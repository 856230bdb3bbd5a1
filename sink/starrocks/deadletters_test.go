package starrocks

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/sink/starrocks/starrocksfake"
)

// TestDeadLettersInTheUnitsTransaction: a unit's dead letters are loaded
// in its transaction — none stored when the unit fails, each stored once
// when it commits and when the same unit is applied again — and come back
// whole: a raw record that is not UTF-8 (in base64), a transaction id of
// 200,000 bytes; a raw record longer than StarRocks' 1 MiB VARCHAR is cut
// at a character and the reason says so.
func TestDeadLettersInTheUnitsTransaction(t *testing.T) {
	ctx := context.Background()
	c := realOrFake(t, starrocksfake.Options{}).withTables(t)
	c.ddl(t, kvDDL)
	if c.fake != nil {
		c.ddl(t, DeadLetterDDL)
	}
	tg := c.target(t, 0)
	if err := tg.SetupDeadLetters(ctx); err != nil {
		t.Fatal(err)
	}
	binary := []byte{0xff, 0xfe, 'x', 0}
	longID := strings.Repeat("ü", 100000)
	huge := strings.Repeat("é", maxText) // 2 MiB
	dls := []commit.DeadLetter{
		{Pos: changelog.Position{Partition: "p0", Offset: 10, Seq: 2}, TxnID: "t1", Raw: binary, Reason: "p0:2: cannot decode"},
		{Pos: changelog.Position{Partition: "p0", Offset: 20, Seq: 3}, TxnID: longID, Raw: []byte(huge), Reason: "too big"},
	}
	// A unit whose row the server refuses stores no dead letter.
	bad := kvUnit(t, tg, 100, 1)
	bad.Batches[0].Upserts[0].Rows[0][0] = nil // a NULL key, which the server filters
	bad.DeadLetters = dls
	if err := tg.Apply(ctx, bad); err == nil {
		t.Fatal("a unit with a NULL key committed")
	}
	if n := c.count(t, "SELECT COUNT(*) FROM "+DeadLetterTable); n != 0 {
		t.Fatalf("%d dead letters after a failed unit, want 0", n)
	}
	u := kvUnit(t, tg, 100, 1)
	u.DeadLetters = dls
	for range 2 {
		if err := tg.Apply(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := tg.DeadLetters(ctx, "pipe")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d dead letters, want 2 (the unit applied twice stores each once): %+v", len(rows), rows)
	}
	if r := rows[0]; !bytes.Equal(r.Raw, binary) || r.TxnID != "t1" || r.Seq != 2 || r.Offset != 10 || r.Partition != "p0" || r.Reason != dls[0].Reason || r.ID != 1 || r.CreatedAt == "" {
		t.Errorf("first dead letter %+v", r)
	}
	r := rows[1]
	if r.TxnID != longID || len(r.Raw) != maxText || !strings.HasPrefix(huge, string(r.Raw)) || !strings.Contains(r.Reason, "raw cut to 1048576 of its 2097152 bytes") || !strings.HasSuffix(r.Reason, "too big") {
		t.Errorf("second dead letter: txn id %d bytes, raw %d bytes, reason %q", len(r.TxnID), len(r.Raw), r.Reason)
	}
	if other, err := tg.DeadLetters(ctx, "other"); err != nil || len(other) != 0 {
		t.Errorf("another pipeline's dead letters: %v, %v", other, err)
	}
}
