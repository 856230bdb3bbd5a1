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
	"github.com/txsink/txsink/sink/sinktest"
	"github.com/txsink/txsink/sink/sqlsink"
)

// TestForeignKeyCycles applies, on every server, units whose rows no order
// of statements can keep within non-deferrable foreign keys — two tables
// referencing each other, and two rows of one table referencing each
// other — and the same units to keys declared DEFERRABLE. The first are
// refused, naming the tables and constraints, with nothing written and the
// checks never switched off; the second commit on PostgreSQL, which defers
// them (SET CONSTRAINTS ALL DEFERRED), and are refused elsewhere.
func TestForeignKeyCycles(t *testing.T) {
	cases := []struct {
		name       string
		deferrable bool
	}{
		{name: "immediate"},
		{name: "deferrable", deferrable: true},
	}
	for _, d := range testdb.Dialects {
		for _, tc := range cases {
			t.Run(d+"/"+tc.name, func(t *testing.T) {
				db := testdb.Open(t, d)
				def := ""
				if tc.deferrable && d == "postgres" {
					def = " DEFERRABLE INITIALLY IMMEDIATE"
				}
				if d == "sqlite" {
					db.Exec(t,
						"CREATE TABLE a (id BIGINT NOT NULL PRIMARY KEY, b_id BIGINT NULL, CONSTRAINT a_b FOREIGN KEY (b_id) REFERENCES b (id))",
						"CREATE TABLE b (id BIGINT NOT NULL PRIMARY KEY, a_id BIGINT NULL, CONSTRAINT b_a FOREIGN KEY (a_id) REFERENCES a (id))",
						"CREATE TABLE tree (id BIGINT NOT NULL PRIMARY KEY, parent BIGINT NULL, CONSTRAINT tree_parent FOREIGN KEY (parent) REFERENCES tree (id))")
				} else {
					db.Exec(t,
						"CREATE TABLE a (id BIGINT NOT NULL PRIMARY KEY, b_id BIGINT NULL)",
						"CREATE TABLE b (id BIGINT NOT NULL PRIMARY KEY, a_id BIGINT NULL, CONSTRAINT b_a FOREIGN KEY (a_id) REFERENCES a (id)"+def+")",
						"ALTER TABLE a ADD CONSTRAINT a_b FOREIGN KEY (b_id) REFERENCES b (id)"+def,
						"CREATE TABLE tree (id BIGINT NOT NULL PRIMARY KEY, parent BIGINT NULL, CONSTRAINT tree_parent FOREIGN KEY (parent) REFERENCES tree (id)"+def+")")
				}
				tdb, describeTable := setupTarget(t, db)
				ctx := context.Background()
				describe := func(name string) *schema.Table {
					tbl := describeTable(name)
					if len(tbl.ForeignKeys) != 1 {
						t.Fatalf("%s: foreign keys %+v, want one", name, tbl.ForeignKeys)
					}
					return tbl
				}
				a, b, tree := describe("a"), describe("b"), describe("tree")
				if got := tree.ForeignKeys[0]; !got.References(tree) || got.Columns[0] != "parent" || got.ParentColumns[0] != "id" || got.Deferrable != (def != "") {
					t.Fatalf("tree's foreign key read as %+v", got)
				}
				pos := changelog.Position{Partition: "p0", Offset: 1, Seq: 1}
				upsert := func(tbl *schema.Table, col string, rows ...[]any) *commit.Batch {
					return &commit.Batch{Table: tbl, Upserts: []commit.Group{group([]string{"id", col}, pos, rows...)}}
				}
				units := []struct {
					name    string
					batches []*commit.Batch
					tables  []string
				}{
					{"two tables referencing each other", []*commit.Batch{upsert(a, "b_id", []any{int64(1), int64(1)}), upsert(b, "a_id", []any{int64(1), int64(1)})}, []string{"a", "b"}},
					{"two rows referencing each other", []*commit.Batch{upsert(tree, "parent", []any{int64(1), int64(2)}, []any{int64(2), int64(1)})}, []string{"tree"}},
				}
				for i, u := range units {
					pos.Offset, pos.Seq = int64(i+1), int64(i+1)
					err := tdb.Apply(ctx, &commit.Unit{Pipeline: "fk", Batches: u.batches, Progress: []changelog.Position{pos}})
					if def != "" {
						if err != nil {
							t.Errorf("%s: %v; want the DEFERRABLE keys deferred to COMMIT", u.name, err)
						}
						continue
					}
					var ce *sqlsink.CycleError
					if !errors.As(err, &ce) {
						t.Errorf("%s: got %v, want a CycleError", u.name, err)
						continue
					}
					if errkind.Of(err) != errkind.Permanent {
						t.Errorf("%s: %v is %v, want Permanent", u.name, err, errkind.Of(err))
					}
					for _, name := range u.tables {
						if !strings.Contains(err.Error(), name+"(") {
							t.Errorf("%s: %q does not name the constraints of table %s", u.name, err, name)
						}
					}
					if !strings.Contains(err.Error(), "never switches foreign-key checks off") {
						t.Errorf("%s: %q does not say what to do", u.name, err)
					}
				}
				want := ""
				if def != "" {
					want = "1|1"
				}
				if got := rows(t, db, "SELECT id, b_id FROM a"); got != want {
					t.Errorf("table a holds %q, want %q", got, want)
				}
				if def != "" {
					want = "1|2\n2|1"
				}
				if got := rows(t, db, "SELECT id, parent FROM tree ORDER BY id"); got != want {
					t.Errorf("table tree holds %q, want %q", got, want)
				}
			})
		}
	}
}

// TestForeignKeyTree writes and deletes a chain of rows of a table
// referencing itself in one unit each, given in the worst order (every
// child before its parent), on every server: rows are ordered a level per
// statement, and nothing is refused.
func TestForeignKeyTree(t *testing.T) {
	for _, d := range testdb.Dialects {
		t.Run(d, func(t *testing.T) {
			db := testdb.Open(t, d)
			db.Exec(t, "CREATE TABLE tree (id BIGINT NOT NULL PRIMARY KEY, parent BIGINT NULL, CONSTRAINT tree_parent FOREIGN KEY (parent) REFERENCES tree (id))")
			tdb := openTarget(t, db)
			ctx := context.Background()
			if err := tdb.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			tree, err := tdb.Describe(ctx, schema.Name{Name: "tree"})
			if err != nil {
				t.Fatal(err)
			}
			const n = 40
			g := commit.Group{Columns: []string{"id", "parent"}}
			del := &commit.Batch{Table: tree}
			for id := int64(n); id >= 1; id-- {
				var parent any
				if id > 1 {
					parent = id - 1
				}
				g.Rows = append(g.Rows, []any{id, parent})
				// Deletes parents first: the worst order for them.
				del.Deletes = append(del.Deletes, []any{n + 1 - id})
			}
			units := []*commit.Batch{{Table: tree, Upserts: []commit.Group{g}}, del}
			for i, b := range units {
				pos := changelog.Position{Partition: "p0", Offset: int64(i + 1), Seq: int64(i + 1)}
				if err := tdb.Apply(ctx, &commit.Unit{Pipeline: "tree", Batches: []*commit.Batch{b}, Progress: []changelog.Position{pos}}); err != nil {
					t.Fatalf("unit %d: %v", i, err)
				}
				want := "0"
				if i == 0 {
					want = "40"
				}
				if got := rows(t, db, "SELECT COUNT(*) FROM tree"); got != want {
					t.Fatalf("after unit %d the table holds %s rows, want %s", i, got, want)
				}
			}
		})
	}
}

// rows returns a query's rows as "a|b" lines.
func rows(t *testing.T, db *testdb.DB, q string) string {
	t.Helper()
	return sinktest.Rows(t, db.SQL, q)
}
