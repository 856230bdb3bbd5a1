package engine_test

import (
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/internal/testdb"
)

// cascadeSchema is a parent cp with children cc (ON DELETE CASCADE),
// whose children cg cascade from them in turn, and cn (ON DELETE SET
// NULL).
func cascadeSchema(dialect string) []string {
	engineOpt := fkEngine(dialect)
	return []string{
		"CREATE TABLE cp (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, deleted BOOLEAN NOT NULL DEFAULT FALSE)" + engineOpt,
		"CREATE TABLE cc (id INT PRIMARY KEY, p INT NOT NULL, val VARCHAR(20) NOT NULL," +
			" CONSTRAINT cc_p FOREIGN KEY (p) REFERENCES cp (id) ON DELETE CASCADE)" + engineOpt,
		"CREATE TABLE cg (id INT PRIMARY KEY, c INT NOT NULL, val VARCHAR(20) NOT NULL," +
			" CONSTRAINT cg_c FOREIGN KEY (c) REFERENCES cc (id) ON DELETE CASCADE)" + engineOpt,
		"CREATE TABLE cn (id INT PRIMARY KEY, p INT NULL, val VARCHAR(20) NOT NULL," +
			" CONSTRAINT cn_p FOREIGN KEY (p) REFERENCES cp (id) ON DELETE SET NULL)" + engineOpt,
	}
}

// cascadeSeed is what the source and the target hold before each case:
// parents 1 and 2, children 10 and 11 of 1 and 20 of 2, grandchildren
// 100 of 10 and 200 of 20, and SET NULL children 50 of 1 and 51 of 2.
var cascadeSeed = []string{
	"INSERT INTO cp (id, name) VALUES (1, 'p1'), (2, 'p2')",
	"INSERT INTO cc VALUES (10, 1, 'a'), (11, 1, 'b'), (20, 2, 'c')",
	"INSERT INTO cg VALUES (100, 10, 'g'), (200, 20, 'h')",
	"INSERT INTO cn VALUES (50, 1, 'n'), (51, 2, 'm')",
}

// cascadeTables are the tables in the order they are emptied, with the
// query rendering each (a NULL reference as -1) and its seeded rows.
var cascadeTables = []struct{ name, query, seeded string }{
	{"cg", "SELECT id, c, val FROM cg ORDER BY id", "100|10|g\n200|20|h"},
	{"cn", "SELECT id, COALESCE(p, -1), val FROM cn ORDER BY id", "50|1|n\n51|2|m"},
	{"cc", "SELECT id, p, val FROM cc ORDER BY id", "10|1|a\n11|1|b\n20|2|c"},
	{"cp", "SELECT id, name FROM cp ORDER BY id", "1|p1\n2|p2"},
}

func cpRow(id int, name string) changelog.Row { return row("id", fkNum(int64(id)), "name", name) }
func ccRow(id, p int, val string) changelog.Row {
	return row("id", fkNum(int64(id)), "p", fkNum(int64(p)), "val", val)
}
func cgRow(id, c int, val string) changelog.Row {
	return row("id", fkNum(int64(id)), "c", fkNum(int64(c)), "val", val)
}

// cnRow is a row of cn; p 0 is NULL.
func cnRow(id, p int, val string) changelog.Row {
	var ref any
	if p != 0 {
		ref = fkNum(int64(p))
	}
	return row("id", fkNum(int64(id)), "p", ref, "val", val)
}

func ins(table string, r changelog.Row) changelog.Change {
	return change(changelog.Insert, "s."+table, changelog.Row{}, r)
}
func upd(table string, before, after changelog.Row) changelog.Change {
	return change(changelog.UpdateAfter, "s."+table, before, after)
}
func del(table string, before changelog.Row) changelog.Change {
	return change(changelog.Delete, "s."+table, before, changelog.Row{})
}

// cascadeCase is a changelog applied over cascadeSeed, as source
// transactions, and the source's final state of the tables it changes
// (the others keep their seeded rows), and of the queries of check.
type cascadeCase struct {
	name  string
	txns  [][]changelog.Change
	want  map[string]string
	check map[string]string
}

// cascadeModes are the ways a case is committed: in plain mode as one
// unit and a unit per row; in transaction mode as one unit merging the
// case's source transactions.
var cascadeModes = []struct {
	name, mode string
	maxRows    int
}{
	{"plain", "plain", 1 << 20},
	{"plain-rows-1", "plain", 1},
	{"transaction", "transaction", 1 << 20},
}

// runCascadeCases applies each case over the seed on every server, in
// every mode of cascadeModes, with cp's tables entry (its source s.cp),
// and compares every table with the case's final state.
func runCascadeCases(t *testing.T, cp config.Table, cases []cascadeCase) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, cascadeSchema(db.Dialect)...)
		for _, tc := range cases {
			for _, m := range cascadeModes {
				t.Run(tc.name+"/"+m.name, func(t *testing.T) {
					for _, tbl := range cascadeTables {
						db.Exec(t, "DELETE FROM "+tbl.name)
					}
					db.Exec(t, cascadeSeed...)
					cfg := pipeline(db, cp, config.Table{Source: "s.cc"}, config.Table{Source: "s.cg"}, config.Table{Source: "s.cn"})
					cfg.Name = phaseName(m.name, tc.name)
					cfg.Sink.FlushMaxRows = m.maxRows
					cfg.Sink.FlushCoalesce = false
					counts := applyPhases(t, cfg, m.mode, []phase{{at: time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC), txns: tc.txns}})
					want := int64(1) // a unit per row, or one for all
					if m.maxRows == 1 {
						want = 0
						for _, txn := range tc.txns {
							want += int64(len(txn))
						}
					}
					if counts[0].commits != want {
						t.Errorf("%d commits, want %d", counts[0].commits, want)
					}
					for _, tbl := range cascadeTables {
						want, ok := tc.want[tbl.name]
						if !ok {
							want = tbl.seeded
						}
						if got := query(t, db, tbl.query); got != want {
							t.Errorf("%s differs from the source's final state:\n got: %s\nwant: %s", tbl.name, got, want)
						}
					}
					for q, want := range tc.check {
						if got := query(t, db, q); got != want {
							t.Errorf("%s:\n got: %s\nwant: %s", q, got, want)
						}
					}
				})
			}
		}
	})
}

// TestForeignKeyOnDeleteCascade deletes parents with ON DELETE CASCADE
// children (and grandchildren cascading from those) in units that also
// write children of them, before the delete and after it, from a source
// that logs no change for a cascade (MySQL's binlog) and from one that
// logs them (PostgreSQL), on every server, plain and transaction mode:
// the target ends with the source's final state.
func TestForeignKeyOnDeleteCascade(t *testing.T) {
	runCascadeCases(t, config.Table{Source: "s.cp"}, []cascadeCase{{
		name: "child-updated-then-parent-deleted",
		txns: [][]changelog.Change{{upd("cc", ccRow(10, 1, "a"), ccRow(10, 1, "a2")), upd("cg", cgRow(100, 10, "g"), cgRow(100, 10, "g2"))},
			{del("cp", cpRow(1, "p1"))}},
		want: map[string]string{"cp": "2|p2", "cc": "20|2|c", "cg": "200|20|h", "cn": "50|-1|n\n51|2|m"},
	}, {
		name: "child-inserted-then-parent-deleted",
		txns: [][]changelog.Change{{ins("cc", ccRow(12, 1, "new")), ins("cg", cgRow(120, 12, "new"))},
			{ins("cg", cgRow(101, 10, "new"))},
			{del("cp", cpRow(1, "p1"))}},
		want: map[string]string{"cp": "2|p2", "cc": "20|2|c", "cg": "200|20|h", "cn": "50|-1|n\n51|2|m"},
	}, {
		// The parent is never in the target: its children cannot be
		// written before its delete, the order alone cannot do it.
		name: "parent-inserted-child-inserted-parent-deleted",
		txns: [][]changelog.Change{{ins("cp", cpRow(3, "p3")), ins("cc", ccRow(30, 3, "new"))},
			{ins("cg", cgRow(300, 30, "new"))},
			{del("cp", cpRow(3, "p3"))}},
	}, {
		// The reverse order: the parent goes (its children with it,
		// unlogged), then a child's key is used again under another
		// parent, with a grandchild.
		name: "parent-deleted-then-child-key-reused",
		txns: [][]changelog.Change{{del("cp", cpRow(1, "p1"))},
			{ins("cc", ccRow(10, 2, "a3")), ins("cg", cgRow(100, 10, "g3"))}},
		want: map[string]string{"cp": "2|p2", "cc": "10|2|a3\n20|2|c", "cg": "100|10|g3\n200|20|h", "cn": "50|-1|n\n51|2|m"},
	}, {
		name: "child-moved-away-then-parent-deleted",
		txns: [][]changelog.Change{{upd("cc", ccRow(10, 1, "a"), ccRow(10, 2, "a"))},
			{del("cp", cpRow(1, "p1"))}},
		want: map[string]string{"cp": "2|p2", "cc": "10|2|a\n20|2|c", "cn": "50|-1|n\n51|2|m"},
	}, {
		// A source that logs its cascades (PostgreSQL, the children's
		// deletes after the parent's), the parent inserted again and a
		// child written under it, in the same unit.
		name: "logged-cascade-parent-inserted-again",
		txns: [][]changelog.Change{{del("cp", cpRow(1, "p1")), del("cc", ccRow(10, 1, "a")), del("cg", cgRow(100, 10, "g")),
			del("cc", ccRow(11, 1, "b")), upd("cn", cnRow(50, 1, "n"), cnRow(50, 0, "n"))},
			{ins("cp", cpRow(1, "p1b")), ins("cc", ccRow(11, 1, "b2")), ins("cg", cgRow(110, 11, "new"))}},
		want: map[string]string{"cp": "1|p1b\n2|p2", "cc": "11|1|b2\n20|2|c", "cg": "110|11|new\n200|20|h", "cn": "50|-1|n\n51|2|m"},
	}})
}

// TestForeignKeyOnDeleteSetNull deletes parents with ON DELETE SET NULL
// children in units that also write children of them, before the delete
// and after it, on every server, plain and transaction mode: the target
// ends with the source's final state, the references the source's delete
// cleared cleared, the others kept.
func TestForeignKeyOnDeleteSetNull(t *testing.T) {
	// Every case deletes parent 1, or 3, whose CASCADE children go too.
	cascaded := map[string]string{"cp": "2|p2", "cc": "20|2|c", "cg": "200|20|h"}
	with := func(cn string) map[string]string {
		m := map[string]string{"cn": cn}
		for k, v := range cascaded {
			m[k] = v
		}
		return m
	}
	runCascadeCases(t, config.Table{Source: "s.cp"}, []cascadeCase{{
		name: "parent-deleted-alone",
		txns: [][]changelog.Change{{del("cp", cpRow(1, "p1"))}},
		want: with("50|-1|n\n51|2|m"),
	}, {
		name: "child-updated-then-parent-deleted",
		txns: [][]changelog.Change{{upd("cn", cnRow(50, 1, "n"), cnRow(50, 1, "n2"))}, {del("cp", cpRow(1, "p1"))}},
		want: with("50|-1|n2\n51|2|m"),
	}, {
		name: "child-inserted-then-parent-deleted",
		txns: [][]changelog.Change{{ins("cn", cnRow(52, 1, "new"))}, {del("cp", cpRow(1, "p1"))}},
		want: with("50|-1|n\n51|2|m\n52|-1|new"),
	}, {
		// The parent is never in the target: the child can only be
		// written with its reference cleared.
		name: "parent-inserted-child-inserted-parent-deleted",
		txns: [][]changelog.Change{{ins("cp", cpRow(3, "p3")), ins("cn", cnRow(53, 3, "new"))}, {del("cp", cpRow(3, "p3"))}},
		want: map[string]string{"cn": "50|1|n\n51|2|m\n53|-1|new"},
	}, {
		name: "child-moved-away-then-parent-deleted",
		txns: [][]changelog.Change{{upd("cn", cnRow(50, 1, "n"), cnRow(50, 2, "n"))}, {del("cp", cpRow(1, "p1"))}},
		want: with("50|2|n\n51|2|m"),
	}, {
		// The reverse order: the parent goes (the reference cleared,
		// unlogged), then the child is pointed at another parent.
		name: "parent-deleted-then-child-updated",
		txns: [][]changelog.Change{{del("cp", cpRow(1, "p1"))}, {upd("cn", cnRow(50, 0, "n"), cnRow(50, 2, "n3"))}},
		want: with("50|2|n3\n51|2|m"),
	}, {
		// A source that logs the SET NULL, the parent inserted again and
		// the child pointed back at it in the same unit.
		name: "logged-set-null-parent-inserted-again",
		txns: [][]changelog.Change{{del("cp", cpRow(1, "p1")), del("cc", ccRow(10, 1, "a")), del("cg", cgRow(100, 10, "g")),
			del("cc", ccRow(11, 1, "b")), upd("cn", cnRow(50, 1, "n"), cnRow(50, 0, "n"))},
			{ins("cp", cpRow(1, "p1b")), upd("cn", cnRow(50, 0, "n"), cnRow(50, 1, "n4"))}},
		want: map[string]string{"cp": "1|p1b\n2|p2", "cc": "20|2|c", "cg": "200|20|h", "cn": "50|1|n4\n51|2|m"},
	}})
}

// TestForeignKeySoftDeletedParent deletes, under delete: soft, parents
// with ON DELETE CASCADE and SET NULL children, in units that write
// children of them: the parent stays, marked, so nothing cascades in the
// target, and the children hold what the changelog wrote, whatever the
// unit boundaries.
func TestForeignKeySoftDeletedParent(t *testing.T) {
	marked := "SELECT id, name, CASE WHEN deleted THEN 'del' ELSE 'live' END FROM cp ORDER BY id"
	runCascadeCases(t, config.Table{Source: "s.cp", Delete: "soft:deleted"}, []cascadeCase{{
		name:  "parent-deleted-alone",
		txns:  [][]changelog.Change{{del("cp", cpRow(1, "p1"))}},
		check: map[string]string{marked: "1|p1|del\n2|p2|live"},
	}, {
		name: "children-written-then-parent-deleted",
		txns: [][]changelog.Change{{upd("cc", ccRow(10, 1, "a"), ccRow(10, 1, "a2")), ins("cc", ccRow(12, 1, "new")),
			upd("cn", cnRow(50, 1, "n"), cnRow(50, 1, "n2"))}, {del("cp", cpRow(1, "p1"))}},
		want:  map[string]string{"cc": "10|1|a2\n11|1|b\n12|1|new\n20|2|c", "cn": "50|1|n2\n51|2|m"},
		check: map[string]string{marked: "1|p1|del\n2|p2|live"},
	}, {
		// A parent inserted and deleted in one flush stays, marked.
		name: "parent-inserted-child-inserted-parent-deleted",
		txns: [][]changelog.Change{{ins("cp", cpRow(3, "p3")), ins("cc", ccRow(30, 3, "new")), ins("cn", cnRow(53, 3, "new"))},
			{del("cp", cpRow(3, "p3"))}},
		want:  map[string]string{"cp": "1|p1\n2|p2\n3|p3", "cc": "10|1|a\n11|1|b\n20|2|c\n30|3|new", "cn": "50|1|n\n51|2|m\n53|3|new"},
		check: map[string]string{marked: "1|p1|live\n2|p2|live\n3|p3|del"},
	}})
}

// TestForeignKeyRuledChild deletes a parent in units that write its ON
// DELETE CASCADE children, the children's table version-guarded or
// soft-deleting, on every server, plain and transaction mode: the
// children go with the parent, as the target's own cascade deletes
// them. (A unit that wrote such a child once made the guarded delete of
// the cascade without its version, and the pipeline panicked.)
func TestForeignKeyRuledChild(t *testing.T) {
	gp := func(id int) changelog.Row { return row("id", fkNum(int64(id))) }
	gc := func(id, p, v int) changelog.Row {
		return row("id", fkNum(int64(id)), "p", fkNum(int64(p)), "v", fkNum(int64(v)))
	}
	cases := []struct {
		name string
		rule config.Table
		txns [][]changelog.Change
	}{{
		name: "guarded-child-updated-then-parent-deleted",
		rule: config.Table{Source: "s.gc", VersionColumn: "v"},
		txns: [][]changelog.Change{{upd("gc", gc(10, 1, 1), gc(10, 1, 2))}, {del("gp", gp(1))}},
	}, {
		name: "guarded-child-of-a-parent-inserted-and-deleted",
		rule: config.Table{Source: "s.gc", VersionColumn: "v"},
		txns: [][]changelog.Change{{ins("gp", gp(3)), ins("gc", gc(30, 3, 1))}, {del("gp", gp(3))}, {del("gp", gp(1))}},
	}, {
		name: "soft-child-updated-then-parent-deleted",
		rule: config.Table{Source: "s.gc", Delete: "soft:deleted"},
		txns: [][]changelog.Change{{upd("gc", gc(10, 1, 1), gc(10, 1, 2))}, {del("gp", gp(1))}},
	}}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, "CREATE TABLE gp (id INT PRIMARY KEY)"+fkEngine(db.Dialect),
			"CREATE TABLE gc (id INT PRIMARY KEY, p INT NOT NULL, v INT NOT NULL, deleted BOOLEAN NOT NULL DEFAULT FALSE,"+
				" CONSTRAINT gc_p FOREIGN KEY (p) REFERENCES gp (id) ON DELETE CASCADE)"+fkEngine(db.Dialect))
		for _, tc := range cases {
			for _, m := range cascadeModes {
				t.Run(tc.name+"/"+m.name, func(t *testing.T) {
					db.Exec(t, "DELETE FROM gc", "DELETE FROM gp", "INSERT INTO gp VALUES (1)", "INSERT INTO gc (id, p, v) VALUES (10, 1, 1)")
					cfg := pipeline(db, config.Table{Source: "s.gp"}, tc.rule)
					cfg.Name = phaseName(m.name, tc.name)
					cfg.Sink.FlushMaxRows = m.maxRows
					cfg.Sink.FlushCoalesce = false
					applyPhases(t, cfg, m.mode, []phase{{at: time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC), txns: tc.txns}})
					if got := query(t, db, "SELECT COUNT(*) FROM gp"); got != "0" {
						t.Errorf("%s parents left, want none", got)
					}
					if got := query(t, db, "SELECT id, p, v FROM gc"); got != "" {
						t.Errorf("children left: %s, want none: they cascade", got)
					}
				})
			}
		}
	})
}
