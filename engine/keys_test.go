package engine_test

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/internal/testdb"
)

// keySpelling is a key column type and spellings of its values: same lists
// spellings of one value (JSON literals), other spellings of another. equal
// says whether the target takes the spellings of same as one key.
type keySpelling struct {
	name  string
	types map[string]string // dialect: column type; a dialect without one is skipped
	same  []string
	other []string
	equal map[string]bool // dialect: spellings of same are one key
}

var keySpellings = []keySpelling{
	{name: "decimal", types: map[string]string{"mysql": "DECIMAL(10,2)", "postgres": "NUMERIC(10,2)", "sqlite": "DECIMAL(10,2)"},
		same: []string{`1.5`, `1.50`, `"1.500"`}, other: []string{`15`, `"15.0"`},
		equal: map[string]bool{"mysql": true, "postgres": true, "sqlite": true}},
	{name: "numeric", types: map[string]string{"postgres": "NUMERIC"},
		same: []string{`1.5`, `1.50`, `1.500`}, other: []string{`-0.0`, `0`},
		equal: map[string]bool{"postgres": true}},
	{name: "char", types: map[string]string{"mysql": "CHAR(3)", "postgres": "CHAR(3)", "sqlite": "CHAR(3)"},
		same: []string{`"a"`, `"a  "`, `"a "`}, other: []string{`" a"`, `" a "`},
		equal: map[string]bool{"mysql": true, "postgres": true}},
	{name: "double", types: map[string]string{"mysql": "DOUBLE", "postgres": "DOUBLE PRECISION", "sqlite": "REAL"},
		same: []string{`0`, `-0.0`, `0.0`}, other: []string{`1.25`, `"1.250"`},
		equal: map[string]bool{"mysql": true, "postgres": true, "sqlite": true}},
	{name: "uuid", types: map[string]string{"mysql": "UUID", "postgres": "UUID"},
		same:  []string{`"A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"`, `"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"`, `"a0eebc999c0b4ef8bb6d6bb9bd380a11"`},
		other: []string{`"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12"`, `"A0EEBC999C0B4EF8BB6D6BB9BD380A12"`},
		equal: map[string]bool{"mysql": true, "postgres": true}},
	{name: "general_ci", types: map[string]string{"mysql": "VARCHAR(10) COLLATE utf8mb4_general_ci"},
		same: []string{`"e"`, `"É"`, `"é "`, `"E"`}, other: []string{`"abc"`, `"ABC  "`, `"Äbc"`},
		equal: map[string]bool{"mysql": true}},
	{name: "bin_pad", types: map[string]string{"mysql": "VARCHAR(10) COLLATE utf8mb4_bin", "postgres": "VARCHAR(10)", "sqlite": "TEXT"},
		same: []string{`"a"`, `"a "`}, other: []string{`"A"`, `"A  "`},
		equal: map[string]bool{"mysql": true}},
	{name: "case", types: map[string]string{"mysql": "VARCHAR(10) COLLATE utf8mb4_general_ci", "sqlite": "TEXT COLLATE NOCASE", "postgres": "TEXT"},
		same: []string{`"abc"`, `"ABC"`, `"aBc"`}, other: []string{`"é"`, `"É"`},
		equal: map[string]bool{"mysql": true, "sqlite": true}},
	{name: "rtrim", types: map[string]string{"sqlite": "TEXT COLLATE RTRIM"},
		same: []string{`"a"`, `"a  "`}, other: []string{`"b"`, `"b "`},
		equal: map[string]bool{"sqlite": true}},
}

// keyChangelog returns n txsink-json changes of table shop.<table> whose keys
// are drawn from same and other, with values v = their line number.
func keyChangelog(rng *rand.Rand, table string, same, other []string, n int) []string {
	var lines []string
	for i := range n {
		spellings := same
		if rng.IntN(3) == 0 {
			spellings = other
		}
		k := spellings[rng.IntN(len(spellings))]
		switch r := rng.IntN(10); {
		case r < 4:
			lines = append(lines, fmt.Sprintf(`{"op":"+I","table":"shop.%s","row":{"k":%s,"v":%d}}`, table, k, i+1))
		case r < 7:
			lines = append(lines, fmt.Sprintf(`{"op":"+U","table":"shop.%s","row":{"k":%s,"v":%d}}`, table, k, i+1))
		default:
			lines = append(lines, fmt.Sprintf(`{"op":"-D","table":"shop.%s","row":{"k":%s}}`, table, k))
		}
	}
	return lines
}

// fixedKeyChangelog is the findings' sequence: an insert deleted by another
// spelling in the same flush, a delete and re-insert that changes the
// spelling, an update in a third spelling.
func fixedKeyChangelog(table string, s []string) []string {
	at := func(i int) string { return s[i%len(s)] }
	return []string{
		fmt.Sprintf(`{"op":"+I","table":"shop.%s","row":{"k":%s,"v":1}}`, table, at(0)),
		fmt.Sprintf(`{"op":"-D","table":"shop.%s","row":{"k":%s}}`, table, at(1)),
		fmt.Sprintf(`{"op":"+I","table":"shop.%s","row":{"k":%s,"v":2}}`, table, at(0)),
		fmt.Sprintf(`{"op":"-D","table":"shop.%s","row":{"k":%s}}`, table, at(0)),
		fmt.Sprintf(`{"op":"+I","table":"shop.%s","row":{"k":%s,"v":3}}`, table, at(1)),
		fmt.Sprintf(`{"op":"+U","table":"shop.%s","row":{"k":%s,"v":4}}`, table, at(2)),
	}
}

// keyRows renders table's rows as "key|v" lines in v order, the key quoted
// as text so spellings (case, spaces, scale) show.
func keyRows(t *testing.T, db *testdb.DB, table string) string {
	t.Helper()
	cast := map[string]string{"mysql": "CAST(k AS CHAR)", "postgres": "k::text", "sqlite": "CAST(k AS TEXT)"}[db.Dialect]
	rows, err := db.SQL.Query("SELECT " + cast + ", v FROM " + table + " ORDER BY v")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k sql.NullString
		var v int
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%q|%d", k.String, v))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "\n")
}

// keyRuns numbers applyKeys' runs.
var keyRuns atomic.Int64

// applyKeys runs lines into table at max-rows flush, plain or in
// transaction mode, from an empty table, and returns the table's rows.
func applyKeys(t *testing.T, db *testdb.DB, table string, lines []string, flush int, txn bool) string {
	t.Helper()
	db.Exec(t, "DELETE FROM "+table)
	// Each run a pipeline of its own: a fresh start over the emptied table.
	cfg := linesPipeline(t, db, table, fmt.Sprintf("keys-%d", keyRuns.Add(1)), lines, flush, txn)
	if r := runPipeline(t, cfg); r.err != nil {
		t.Fatal(r.err)
	}
	return keyRows(t, db, table)
}

// linesPipeline returns the config of pipeline name reading lines, one
// file, into table shop.<table> at max-rows flush, plain or in transaction
// mode.
func linesPipeline(t *testing.T, db *testdb.DB, table, name string, lines []string, flush int, txn bool) *config.Config {
	t.Helper()
	cfg := pipeline(db, config.Table{Source: "shop." + table})
	cfg.Name = name
	cfg.Source.Set("paths", []string{writeLines(t, t.TempDir(), "changes.jsonl", lines)})
	cfg.Sink.FlushMaxRows = flush
	if txn {
		txnPipeline(cfg)
	}
	return cfg
}

// forEachKeySpelling runs f on every server for each of keySpellings the
// server has a type for, with a table <prefix><name> (k the type, v INT).
func forEachKeySpelling(t *testing.T, prefix string, f func(t *testing.T, db *testdb.DB, ks keySpelling, table string)) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		for _, ks := range keySpellings {
			typ, ok := ks.types[db.Dialect]
			if !ok {
				continue
			}
			t.Run(ks.name, func(t *testing.T) {
				table := prefix + ks.name
				db.Exec(t, fmt.Sprintf("CREATE TABLE %s (k %s NOT NULL PRIMARY KEY, v INT NOT NULL)", table, typ))
				f(t, db, ks, table)
			})
		}
	})
}

// TestKeySpellings applies, on every server, changes whose keys are
// different spellings of values the target compares equal (DECIMAL 1.5
// and 1.50, CHAR 'a' and 'a  ', DOUBLE 0 and -0.0, UUIDs in any case or
// without dashes, MariaDB general_ci's accents and padding, SQLite's
// NOCASE and RTRIM) — and spellings it tells apart — at max-rows 1, 2, 3
// and all in one flush, plain and in transaction mode: the final table,
// spellings included, equals the replay (every change applied alone).
func TestKeySpellings(t *testing.T) {
	forEachKeySpelling(t, "k_", func(t *testing.T, db *testdb.DB, ks keySpelling, table string) {
		lines := fixedKeyChangelog(table, ks.same)
		replay := applyKeys(t, db, table, lines, 1, false)
		// The replay itself shows whether the server merges the
		// spellings: one row (the last change's) if it does.
		if rows := strings.Count(replay, "\n") + 1; ks.equal[db.Dialect] != (rows == 1) || !strings.HasSuffix(replay, "|4") {
			t.Fatalf("replay = %s: equal spellings = %v, want %v", replay, rows == 1, ks.equal[db.Dialect])
		}
		for _, flush := range []int{1, 2, 3, 1 << 30} {
			for _, txn := range []bool{false, true} {
				if got := applyKeys(t, db, table, lines, flush, txn); got != replay {
					t.Errorf("max-rows %d, txn %v: table\n%s\nwant the replay\n%s", flush, txn, got, replay)
				}
			}
		}
	})
}

// TestKeySpellingsProperty generates seeded random changelogs of inserts,
// updates and deletes over two keys in several spellings each, for every
// column type and collation of keySpellings, applies each at random flush
// boundaries on every server, plain and in transaction mode, and compares
// the final table with the replay (one change per flush).
func TestKeySpellingsProperty(t *testing.T) {
	seeds := 8
	if testing.Short() {
		seeds = 1
	}
	forEachKeySpelling(t, "p_", func(t *testing.T, db *testdb.DB, ks keySpelling, table string) {
		for seed := range seeds {
			rng := rand.New(rand.NewPCG(uint64(seed), 2024))
			lines := keyChangelog(rng, table, ks.same, ks.other, 50)
			replay := applyKeys(t, db, table, lines, 1, false)
			flush := []int{2, 3, 5, 11, 1 << 30}[rng.IntN(5)]
			txn := rng.IntN(2) == 0
			if got := applyKeys(t, db, table, lines, flush, txn); got != replay {
				t.Errorf("seed %d, max-rows %d, txn %v: table\n%s\nwant the replay\n%s\nchangelog:\n%s", seed, flush, txn, got, replay, strings.Join(lines, "\n"))
			}
		}
	})
}
