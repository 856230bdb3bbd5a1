package sqlsink_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
)

// TestUniqueKeyHolder applies, on every server, units whose rows take a
// value of a secondary unique key another row holds. Held by a row the
// unit changes too (given after the taker, the worst order), the unit
// applies. Held by a row the unit does not change, it is refused naming
// both rows and the key, and nothing changes: MariaDB's ON DUPLICATE KEY
// UPDATE, which would match the unique key and overwrite the holder,
// never runs on it.
func TestUniqueKeyHolder(t *testing.T) {
	for _, d := range testdb.Dialects {
		t.Run(d, func(t *testing.T) {
			db := testdb.Open(t, d)
			db.Exec(t, "CREATE TABLE acct (id BIGINT NOT NULL PRIMARY KEY, handle VARCHAR(20) NOT NULL, note VARCHAR(20) NULL)",
				"CREATE UNIQUE INDEX acct_handle ON acct (handle)",
				"INSERT INTO acct (id, handle, note) VALUES (1, 'a', 'one'), (2, 'b', 'two')")
			tdb := openTarget(t, db)
			ctx := context.Background()
			if err := tdb.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			acct, err := tdb.Describe(ctx, schema.Name{Name: "acct"})
			if err != nil {
				t.Fatal(err)
			}
			if len(acct.UniqueKeys) != 1 || acct.UniqueKeys[0].Columns[0] != "handle" {
				t.Fatalf("unique keys read as %+v", acct.UniqueKeys)
			}
			unit := func(seq int64, rows ...[]any) *commit.Unit {
				pos := changelog.Position{Partition: "p0", Offset: seq, Seq: seq}
				g := commit.Group{Columns: []string{"id", "handle", "note"}, Rows: rows}
				for range rows {
					g.Pos = append(g.Pos, pos)
				}
				return &commit.Unit{Pipeline: "uk", Batches: []*commit.Batch{{Table: acct, Upserts: []commit.Group{g}}}, Progress: []changelog.Position{pos}}
			}
			// A new row 3 takes 'b' from row 2, which the unit does not
			// change.
			err = tdb.Apply(ctx, unit(1, []any{int64(3), "b", "three"}))
			var se *sink.Error
			if !errors.As(err, &se) || errkind.Of(err) != errkind.Permanent || se.Key != "(2)" ||
				!strings.Contains(err.Error(), "acct_handle") || !strings.Contains(err.Error(), "row (3)") {
				t.Errorf("taking a value a row outside the unit holds: %v; want a Permanent error naming rows (2), (3) and acct_handle", err)
			}
			if got := rows(t, db, "SELECT id, handle, note FROM acct ORDER BY id"); got != "1|a|one\n2|b|two" {
				t.Fatalf("after the refused unit the table holds\n%s", got)
			}
			// Row 3 takes 'b', row 2 gives it up for 'a', row 1 gives
			// 'a' up for 'c': taker first in the statement.
			if err := tdb.Apply(ctx, unit(2, []any{int64(3), "b", "three"}, []any{int64(2), "a", "two"}, []any{int64(1), "c", "one"})); err != nil {
				t.Fatal(err)
			}
			if got := rows(t, db, "SELECT id, handle, note FROM acct ORDER BY id"); got != "1|c|one\n2|a|two\n3|b|three" {
				t.Errorf("after the exchange the table holds\n%s", got)
			}
			// With a table of the unit whose rows cascade from acct's, a
			// holder of the NOT NULL handle cannot be deleted and
			// written again: the unit is refused, naming the key.
			db.Exec(t, "CREATE TABLE kid (id BIGINT NOT NULL PRIMARY KEY, acct_id BIGINT NOT NULL, CONSTRAINT kid_acct FOREIGN KEY (acct_id) REFERENCES acct (id) ON DELETE CASCADE)",
				"INSERT INTO kid (id, acct_id) VALUES (1, 1)")
			kid, err := tdb.Describe(ctx, schema.Name{Name: "kid"})
			if err != nil {
				t.Fatal(err)
			}
			u := unit(3, []any{int64(1), "a", "one"}, []any{int64(2), "c", "two"})
			pos := u.Progress[0]
			u.Batches = append(u.Batches, &commit.Batch{Table: kid, Upserts: []commit.Group{{Columns: []string{"id", "acct_id"}, Rows: [][]any{{int64(2), int64(2)}}, Pos: []changelog.Position{pos}}}})
			err = tdb.Apply(ctx, u)
			if err == nil || !strings.Contains(err.Error(), "kid(acct_id) → acct(id)") || !strings.Contains(err.Error(), "ON DELETE CASCADE") {
				t.Errorf("a swap whose holder's delete would cascade: %v; want it refused naming the foreign key", err)
			}
			if got := rows(t, db, "SELECT id, acct_id FROM kid"); got != "1|1" {
				t.Errorf("kid holds %q after the refused unit, want 1|1", got)
			}
		})
	}
}
