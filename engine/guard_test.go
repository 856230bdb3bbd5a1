package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
)

// TestVersionGuardCounts applies upserts and deletes older, as old as
// and newer than the stored rows, in one flush, on every server, in
// plain and transaction mode: only those not older land, and the refused
// ones are counted exactly. A delete without the version in its before
// image takes its source position as its version.
func TestVersionGuardCounts(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			forEachDialect(t, func(t *testing.T, db *testdb.DB) { versionGuardCounts(t, db, mode) })
		})
	}
}

// versionGuardCounts is TestVersionGuardCounts on db in mode. In
// transaction mode the first flush's changes are split into source
// transactions of one to three changes, the bulk flush's into
// transactions of 500.
func versionGuardCounts(t *testing.T, db *testdb.DB, mode string) {
	const many = 3000 // a flush large enough for the bulk paths (LOAD DATA, COPY, unnest)
	var seed strings.Builder
	seed.WriteString("INSERT INTO vg VALUES (1, 10, 'a'), (2, 10, 'b'), (3, 10, 'c'), (4, 10, 'd'), (7, NULL, 'g'), (8, 10, 'h')")
	for id := 100; id < 100+many; id++ {
		fmt.Fprintf(&seed, ", (%d, 10, 'seed')", id)
	}
	db.Exec(t, `CREATE TABLE vg (id INT NOT NULL PRIMARY KEY, v BIGINT NULL, val VARCHAR(10) NOT NULL)`, seed.String())
	cfg := pipeline(db, config.Table{Source: "s.vg", VersionColumn: "v"})
	cfg.Name = phaseName(mode, "guard-counts")
	r := func(id int, v any, val string) changelog.Row {
		return row("id", changelog.Number(strconv.Itoa(id)), "v", v, "val", val)
	}
	n := func(v int) changelog.Number { return changelog.Number(strconv.Itoa(v)) }
	up := func(id int, v any, val string) changelog.Change {
		return change(changelog.UpdateAfter, "s.vg", changelog.Row{}, r(id, v, val))
	}
	del := func(before changelog.Row) changelog.Change {
		return change(changelog.Delete, "s.vg", before, changelog.Row{})
	}
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	phases := []phase{{at: at, txns: [][]changelog.Change{
		{up(1, n(5), "older")},                        // refused
		{up(2, n(10), "same"), up(3, n(11), "newer")}, // applied: not newer; applied
		{del(r(4, n(9), "d")), del(r(5, n(1), "x"))},  // refused; no row: nothing refused
		{change(changelog.Insert, "s.vg", changelog.Row{}, r(6, n(1), "new")), // inserted
			up(7, n(1), "fromnull"), // NULL is older than any version
			del(row("id", n(8)))},   // its version: its position, past 10
	}}, {at: at, txns: [][]changelog.Change{
		{up(2, nil, "nullv")}, // a NULL version is the oldest: refused over 10
	}}, {at: at}}
	// The bulk flush: several statements, still guarded row by row.
	var bulk []changelog.Change
	for id := 100; id < 100+many; id++ {
		v := 5 + 10*(id%2) // odd ids newer (15), even ids older (5)
		bulk = append(bulk, up(id, n(v), "bulk"))
	}
	// Every third key is then deleted in the same flush (the delete is
	// its last change): at version 12 for even ids (deleted), 8 for odd
	// ones (refused).
	newer, seeded, refused := 0, 0, 0
	for id := 100; id < 100+many; id++ {
		switch {
		case id%3 != 0 && id%2 == 1:
			newer++
		case id%3 != 0:
			seeded++
			refused++
		case id%2 == 1:
			bulk = append(bulk, del(r(id, n(8), "bulk")))
			seeded++
			refused++
		default:
			bulk = append(bulk, del(r(id, n(12), "bulk")))
		}
	}
	for chunk := range slices.Chunk(bulk, 500) {
		phases[2].txns = append(phases[2].txns, chunk)
	}
	counts := applyPhases(t, cfg, mode, phases)
	want := "2|10|same\n3|11|newer\n4|10|d\n6|1|new\n7|1|fromnull" // 2: its NULL version's upsert refused
	if got := query(t, db, "SELECT id, v, val FROM vg WHERE id <> 1 AND id < 100 ORDER BY id"); got != want {
		t.Errorf("rows:\n%s\nwant:\n%s", got, want)
	}
	if got := query(t, db, "SELECT v, val FROM vg WHERE id = 1"); got != "10|a" {
		t.Errorf("row 1 = %q, want the stored 10|a: an older upsert moved it back", got)
	}
	if got := query(t, db, "SELECT COUNT(*) FROM vg WHERE id >= 100 AND val = 'bulk' AND v = 15"); got != strconv.Itoa(newer) {
		t.Errorf("newer bulk rows written = %s, want %d", got, newer)
	}
	if got := query(t, db, "SELECT COUNT(*) FROM vg WHERE id >= 100 AND val = 'seed' AND v = 10"); got != strconv.Itoa(seeded) {
		t.Errorf("bulk rows left as stored = %s, want %d", got, seeded)
	}
	if got := query(t, db, "SELECT COUNT(*) FROM vg WHERE id >= 100"); got != strconv.Itoa(newer+seeded) {
		t.Errorf("bulk rows left = %s, want %d", got, newer+seeded)
	}
	// Refused: row 1's upsert and row 4's delete; row 2's NULL version;
	// the bulk's older upserts and deletes.
	checkCounts(t, counts, []phaseCounts{{refused: 2}, {refused: 1}, {refused: int64(refused)}})
}

// guardLines is a changelog of n keys, each inserted at version 1 and
// updated to 4, every tenth deleted (its before image at version 4),
// the keys' changes interleaved; in transaction mode every 3 changes
// are one source transaction.
func guardLines(n int, txn bool) []string {
	var lines []string
	add := func(op string, id, v int) {
		lines = append(lines, fmt.Sprintf(`{"op":%q,"table":"s.vs","row":{"id":%d,"v":%d,"val":"v%d"}`, op, id, v, v))
	}
	for v := 1; v <= 4; v++ {
		for id := 1; id <= n; id++ {
			op := "+U"
			if v == 1 {
				op = "+I"
			}
			add(op, id, v)
		}
	}
	for id := 10; id <= n; id += 10 {
		add("-D", id, 4)
	}
	for i := range lines {
		if txn {
			end := ""
			if i%3 == 2 || i == len(lines)-1 {
				end = `,"txn_end":true`
			}
			lines[i] += fmt.Sprintf(`,"txn":"t%d"%s`, i/3, end)
		}
		lines[i] += "}"
	}
	return lines
}

// TestVersionGuardReplay is issue 27's test of the guard: a changelog is
// applied, then replayed from its start (a restore of the progress, or
// a second pipeline) while a second writer moves rows ahead, with small
// flushes, plain and transaction mode, on every server. A reader polling
// the table never sees a row's version go down nor a row vanish (deletes
// are soft, so a replay cannot resurrect a deleted row with an older
// version either), and the end state is each row's newest.
func TestVersionGuardReplay(t *testing.T) {
	const n = 60
	for _, txn := range []bool{false, true} {
		mode := map[bool]string{false: "plain", true: "txn"}[txn]
		t.Run(mode, func(t *testing.T) {
			forEachDialect(t, func(t *testing.T, db *testdb.DB) {
				db.Exec(t, `CREATE TABLE vs (id INT NOT NULL PRIMARY KEY, v BIGINT NOT NULL, val VARCHAR(10) NOT NULL, deleted BOOLEAN NOT NULL DEFAULT FALSE)`)
				path := filepath.Join(t.TempDir(), "in.jsonl")
				if err := os.WriteFile(path, []byte(strings.Join(guardLines(n, txn), "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				run := replayRunner(t, db, config.Table{Source: "s.vs", VersionColumn: "v", Delete: "soft:deleted"}, txn, path)
				if st := run("first"); st.GuardRefused != 0 {
					t.Errorf("first run: GuardRefused = %d, want 0 (every change is newer)", st.GuardRefused)
				}
				want := map[int]string{}
				for id := 1; id <= n; id++ {
					want[id] = fmt.Sprintf("4|v4|%v", id%10 == 0)
				}
				checkRows(t, db, want)

				reader := startVersionReader(t, db)
				w := &aheadWriter{t: t, db: db, every: 1}
				for id := 3; id <= n; id += 3 {
					w.ids = append(w.ids, id)
					want[id] = fmt.Sprintf("1004|w2|%v", id%10 == 0)
				}
				st := run("replay", w)
				polls, violations := reader.finish(t)
				if violations > 0 {
					t.Errorf("the reader saw %d rows go back or vanish in %d polls", violations, polls)
				}
				if len(w.ids) > 0 {
					t.Fatalf("the replay committed too few units for the writer: %d ids left", len(w.ids))
				}
				if st.GuardRefused == 0 {
					t.Error("replay: GuardRefused = 0, want the older changes counted")
				}
				checkRows(t, db, want)
				t.Logf("replay: %d changes refused by the guard, reader polled %d times", st.GuardRefused, polls)
			})
		})
	}
}

// replayRunner returns a function that runs the changelog at path into
// db's table of tc as the pipeline name, with small flushes (many units,
// for a second writer to come between), plain or transaction mode, with
// hooks, and returns its stats.
func replayRunner(t *testing.T, db *testdb.DB, tc config.Table, txn bool, path string) func(name string, hooks ...engine.Hook) engine.Stats {
	return func(name string, hooks ...engine.Hook) engine.Stats {
		t.Helper()
		cfg := pipeline(db, tc)
		if txn {
			cfg = txnPipeline(cfg)
		}
		cfg.Name = name
		cfg.Sink.FlushMaxRows = 7
		cfg.Sink.FlushCoalesce = false
		cfg.Source.Set("paths", []string{path})
		e := newEngine(t, cfg, engine.WithHooks(hooks...))
		if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
			t.Fatalf("run %s: %v", name, err)
		}
		return e.Stats()
	}
}

// checkRows compares vs's rows, as "v|val|deleted" by id, with want.
func checkRows(t *testing.T, db *testdb.DB, want map[int]string) {
	t.Helper()
	var b strings.Builder
	for id := 1; id <= len(want); id++ {
		if id > 1 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%d|%s", id, want[id])
	}
	got := query(t, db, "SELECT id, v, val, CASE WHEN deleted THEN 'true' ELSE 'false' END FROM vs ORDER BY id")
	if got != b.String() {
		t.Errorf("rows:\n%s\nwant:\n%s", got, b.String())
	}
}

// aheadWriter is a second writer of vs: after every few commits of the
// pipeline it is a hook of, it moves its next row ahead by 1000
// versions, between two units of the replay.
type aheadWriter struct {
	t       *testing.T
	db      *testdb.DB
	every   int
	commits int
	ids     []int
}

// OnCommit implements engine.HookCommit.
func (w *aheadWriter) OnCommit(info engine.CommitInfo) {
	if info.Err != nil || len(w.ids) == 0 {
		return
	}
	w.commits++
	if w.commits%w.every != 0 {
		return
	}
	id := w.ids[0]
	w.ids = w.ids[1:]
	if _, err := w.db.SQL.Exec("UPDATE vs SET v = v + 1000, val = 'w2' WHERE id = " + strconv.Itoa(id)); err != nil {
		w.t.Errorf("second writer: %v", err)
	}
}

// versionReader polls vs until stopped, counting as a violation each
// row whose version went down or that it saw and is gone, and logging
// the first.
func startVersionReader(t *testing.T, db *testdb.DB) *poller {
	seen := map[int]int64{}
	return startChecker(t, func() (int64, error) {
		rows, err := db.SQL.Query("SELECT id, v FROM vs")
		if err != nil {
			return 0, err
		}
		defer rows.Close()
		now := map[int]int64{}
		for rows.Next() {
			var id int
			var v int64
			if err := rows.Scan(&id, &v); err != nil {
				return 0, err
			}
			now[id] = v
		}
		var bad int64
		for id, old := range seen {
			if v, ok := now[id]; !ok || v < old {
				if bad == 0 {
					t.Logf("row %d went from version %d to %d (present: %v)", id, old, v, ok)
				}
				bad++
			}
		}
		seen = now
		return bad, rows.Err()
	})
}

// TestDeleteRules applies deletes to a soft-deleted bool table, a
// soft-deleted timestamp table and an ignoring one, with deletes after
// inserts in one flush, a revive in the delete's flush and in a later
// one, on every server, in plain and transaction mode.
func TestDeleteRules(t *testing.T) {
	ts := map[string]string{"mysql": "TIMESTAMP(3) NULL", "postgres": "TIMESTAMP(3) NULL", "sqlite": "TIMESTAMP NULL"}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			forEachDialect(t, func(t *testing.T, db *testdb.DB) {
				db.Exec(t, `CREATE TABLE sb (id INT NOT NULL PRIMARY KEY, val VARCHAR(10) NOT NULL, deleted BOOLEAN NOT NULL DEFAULT FALSE)`,
					`CREATE TABLE st (id INT NOT NULL PRIMARY KEY, val VARCHAR(10) NOT NULL, deleted_at `+ts[db.Dialect]+`)`,
					`CREATE TABLE ig (id INT NOT NULL PRIMARY KEY, val VARCHAR(10) NOT NULL)`)
				deleteRules(t, db, mode, "2026-12-03 10:20:30.123", "2026-12-03 10:21:30.123")
			})
		})
	}
}

// deleteRules runs TestDeleteRules' changes in mode into db's tables sb
// (soft, a boolean), st (soft, a timestamp column, whose deletes' times
// read back as first and second) and ig (deletes ignored). In
// transaction mode the first flush's changes are source transactions of
// their own (an insert and its delete reduced apart, then merged), the
// later ones a transaction per table.
func deleteRules(t *testing.T, db *testdb.DB, mode, first, second string) {
	t.Helper()
	cfg := pipeline(db, config.Table{Source: "s.sb", Delete: "soft:deleted"}, config.Table{Source: "s.st", Delete: "soft:deleted_at"},
		config.Table{Source: "s.ig", Delete: "ignore"})
	cfg.Name = phaseName(mode, "delete-rules")
	at := time.Date(2026, 12, 3, 10, 20, 30, 123456789, time.UTC)
	r := func(id int, val string) changelog.Row {
		return row("id", changelog.Number(strconv.Itoa(id)), "val", val)
	}
	ins := func(tbl string, id int, val string) changelog.Change {
		return change(changelog.Insert, tbl, changelog.Row{}, r(id, val))
	}
	del := func(tbl string, id int, val string) changelog.Change {
		return change(changelog.Delete, tbl, r(id, val), changelog.Row{})
	}
	phases := []phase{{at: at}, {at: at.Add(time.Minute)}, {at: at.Add(time.Minute)}, {at: at.Add(time.Minute)}}
	for _, tbl := range []string{"s.sb", "s.st", "s.ig"} {
		phases[0].txns = append(phases[0].txns, []changelog.Change{ins(tbl, 1, "a")}, []changelog.Change{ins(tbl, 2, "b")},
			[]changelog.Change{del(tbl, 2, "b")}, // in the insert's flush: the row stays, marked
			[]changelog.Change{ins(tbl, 3, "c")})
		phases[1].txns = append(phases[1].txns, []changelog.Change{del(tbl, 1, "a"), del(tbl, 3, "c"),
			ins(tbl, 3, "c2")}) // revived in the delete's flush
	}
	for _, tbl := range []string{"s.sb", "s.st"} {
		phases[2].txns = append(phases[2].txns, []changelog.Change{ins(tbl, 4, "d"), del(tbl, 4, "d")})
		phases[3].txns = append(phases[3].txns, []changelog.Change{ins(tbl, 4, "d2")}) // revived in a later flush
	}
	counts := applyPhases(t, cfg, mode, phases)
	if got, want := query(t, db, "SELECT id, val, CASE WHEN deleted THEN 'del' ELSE 'live' END FROM sb ORDER BY id"), "1|a|del\n2|b|del\n3|c2|live\n4|d2|live"; got != want {
		t.Errorf("sb:\n%s\nwant:\n%s", got, want)
	}
	got := query(t, db, "SELECT id, val, COALESCE("+castText(db.Dialect, "deleted_at")+", 'live') FROM st ORDER BY id")
	if want := "1|a|" + second + "\n2|b|" + first + "\n3|c2|live\n4|d2|live"; !sameTimes(got, want) {
		t.Errorf("st:\n%s\nwant:\n%s", got, want)
	}
	if got, want := query(t, db, "SELECT id, val FROM ig ORDER BY id"), "1|a\n2|b\n3|c2"; got != want {
		t.Errorf("ig:\n%s\nwant:\n%s", got, want)
	}
	// The ignored deletes: ig's 2, then its 1 and 3.
	checkCounts(t, counts, []phaseCounts{{ignored: 1}, {ignored: 2}, {}, {}})
}

// castText renders column c as text in dialect.
func castText(dialect, c string) string {
	if dialect == "mysql" {
		return "CAST(" + c + " AS CHAR)"
	}
	return "CAST(" + c + " AS TEXT)"
}

// sameTimes compares two renderings whose timestamps may be spelled with
// a T or a space, with or without a trailing Z or zero fraction.
func sameTimes(got, want string) bool {
	norm := func(s string) string {
		s = strings.ReplaceAll(s, "T", " ")
		s = strings.ReplaceAll(s, "Z", "")
		return strings.ReplaceAll(s, ".000", "")
	}
	return norm(got) == norm(want)
}
