package sqlsink_test

import (
	"context"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/schema"
)

// TestTruncate applies units with truncated batches (commit.Batch.Truncate)
// on every server, to a parent and a child table joined by a foreign key:
// both emptied and written again in one unit, the child's DELETE first
// whatever the batches' order; a unit whose later row the server refuses
// leaves every row in place (the DELETE is the unit's, never an
// implicitly committed TRUNCATE); and a parent truncated while the
// target's child still references it is refused, naming the table, the
// TRUNCATE's position and what to do; a table whose rows reference each
// other, parents first in key order, is emptied too (MariaDB checks the
// key row by row), and so are two tables that reference each other.
func TestTruncate(t *testing.T) {
	for _, d := range testdb.Dialects {
		t.Run(d, func(t *testing.T) {
			db := testdb.Open(t, d)
			db.Exec(t,
				"CREATE TABLE parent (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(20) NULL)",
				"CREATE TABLE child (id BIGINT NOT NULL PRIMARY KEY, parent_id BIGINT NOT NULL, CONSTRAINT child_parent FOREIGN KEY (parent_id) REFERENCES parent (id))",
				"INSERT INTO parent VALUES (1, 'a'), (2, 'b')",
				"INSERT INTO child VALUES (10, 1), (11, 2)")
			tdb, describe := setupTarget(t, db)
			ctx := context.Background()
			parent, child := describe("parent"), describe("child")
			seq := int64(0)
			apply := func(batches ...*commit.Batch) error {
				seq++
				pos := changelog.Position{Partition: "p0", Offset: seq, Seq: seq}
				return tdb.Apply(ctx, &commit.Unit{Pipeline: "trunc", Batches: batches, Progress: []changelog.Position{pos}})
			}
			batch := func(tbl *schema.Table, truncate bool, cols []string, rows ...[]any) *commit.Batch {
				b := &commit.Batch{Table: tbl, Truncate: truncate, TruncatePos: changelog.Position{Partition: "p0", Offset: 7, Seq: 7}}
				if len(rows) > 0 {
					b.Upserts = []commit.Group{group(cols, changelog.Position{Partition: "p0", Offset: 8, Seq: 8}, rows...)}
				}
				return b
			}
			state := func() string {
				return rows(t, db, "SELECT id, name FROM parent ORDER BY id") + " / " + rows(t, db, "SELECT id, parent_id FROM child ORDER BY id")
			}

			// A refused row after the truncates: nothing moves.
			err := apply(batch(parent, true, []string{"id", "name"}, []any{int64(3), "c"}),
				batch(child, true, []string{"id", "parent_id"}, []any{int64(12), int64(99)}))
			if err == nil {
				t.Fatal("a child row of a missing parent was taken")
			}
			if got, want := state(), "1|a\n2|b / 10|1\n11|2"; got != want {
				t.Fatalf("after a refused unit the tables hold %q, want %q", got, want)
			}

			// Both truncated and written again, parent's batch first.
			if err := apply(batch(parent, true, []string{"id", "name"}, []any{int64(3), "c"}),
				batch(child, true, []string{"id", "parent_id"}, []any{int64(12), int64(3)})); err != nil {
				t.Fatal(err)
			}
			if got, want := state(), "3|c / 12|3"; got != want {
				t.Fatalf("after the truncating unit the tables hold %q, want %q", got, want)
			}

			// The parent alone, the child's row referencing it.
			err = apply(batch(parent, true, nil))
			if err == nil {
				t.Fatal("the parent was emptied under its child's row")
			}
			msg := err.Error()
			for _, want := range []string{"p0:7: truncate", "parent", "source.truncate: refuse", "nothing of this flush was committed"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not contain %q", msg, want)
				}
			}
			if errkind.Of(err) != errkind.Permanent {
				t.Errorf("%v is %v, want Permanent", err, errkind.Of(err))
			}
			if got, want := state(), "3|c / 12|3"; got != want {
				t.Fatalf("after the refused truncate the tables hold %q, want %q", got, want)
			}

			// A truncate and nothing else empties the table.
			if err := apply(batch(child, true, nil)); err != nil {
				t.Fatal(err)
			}
			if got, want := state(), "3|c / "; got != want {
				t.Fatalf("after the child's truncate the tables hold %q, want %q", got, want)
			}

			// A table referencing itself, its rows a chain whose parents
			// come first in key order.
			db.Exec(t, "CREATE TABLE tree (id BIGINT NOT NULL PRIMARY KEY, parent BIGINT NULL, CONSTRAINT tree_parent FOREIGN KEY (parent) REFERENCES tree (id))",
				"INSERT INTO tree VALUES (1, NULL)", "INSERT INTO tree VALUES (2, 1)", "INSERT INTO tree VALUES (3, 2)", "INSERT INTO tree VALUES (4, 3)")
			tree := describe("tree")
			if err := apply(batch(tree, true, []string{"id", "parent"}, []any{int64(7), nil})); err != nil {
				t.Fatal(err)
			}
			if got, want := rows(t, db, "SELECT id, parent FROM tree ORDER BY id"), "7|NULL"; got != want {
				t.Fatalf("after the tree's truncate it holds %q, want %q", got, want)
			}

			// Two tables referencing each other, emptied together.
			if d == "sqlite" {
				db.Exec(t, "CREATE TABLE ca (id BIGINT NOT NULL PRIMARY KEY, cb_id BIGINT NULL, CONSTRAINT ca_cb FOREIGN KEY (cb_id) REFERENCES cb (id))",
					"CREATE TABLE cb (id BIGINT NOT NULL PRIMARY KEY, ca_id BIGINT NULL, CONSTRAINT cb_ca FOREIGN KEY (ca_id) REFERENCES ca (id))")
			} else {
				db.Exec(t, "CREATE TABLE ca (id BIGINT NOT NULL PRIMARY KEY, cb_id BIGINT NULL)",
					"CREATE TABLE cb (id BIGINT NOT NULL PRIMARY KEY, ca_id BIGINT NULL, CONSTRAINT cb_ca FOREIGN KEY (ca_id) REFERENCES ca (id))",
					"ALTER TABLE ca ADD CONSTRAINT ca_cb FOREIGN KEY (cb_id) REFERENCES cb (id)")
			}
			db.Exec(t, "INSERT INTO ca VALUES (1, NULL)", "INSERT INTO cb VALUES (1, 1)", "UPDATE ca SET cb_id = 1 WHERE id = 1")
			ca, cb := describe("ca"), describe("cb")
			if err := apply(batch(ca, true, []string{"id", "cb_id"}, []any{int64(2), nil}), batch(cb, true, nil)); err != nil {
				t.Fatal(err)
			}
			if got, want := rows(t, db, "SELECT id, cb_id FROM ca ORDER BY id")+" / "+rows(t, db, "SELECT id, ca_id FROM cb ORDER BY id"), "2|NULL / "; got != want {
				t.Fatalf("after the cycle's truncate the tables hold %q, want %q", got, want)
			}
		})
	}
}
