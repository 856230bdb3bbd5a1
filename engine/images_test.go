package engine_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/sink"
)

// imageModes are the flush sizes and modes the image tests run in: one
// row per commit, a middle size, all in one commit, and transaction mode.
var imageModes = []struct {
	name string
	set  func(*config.Config)
}{
	{"max-rows-1", func(c *config.Config) { c.Sink.FlushMaxRows = 1 }},
	{"max-rows-2", func(c *config.Config) { c.Sink.FlushMaxRows = 2 }},
	{"all-in-one", func(c *config.Config) { c.Sink.FlushMaxRows = 1 << 30 }},
	{"transaction", func(c *config.Config) { txnPipeline(c); c.Sink.FlushMaxRows = 1 << 30 }},
}

// TestPartialImages applies update images that lack columns (GoldenGate's
// compressed updates, MySQL's minimal row images, Debezium's unavailable
// values): the columns an image lacks keep their value through reduction
// too, whatever the flush boundaries, and a partial update of a row the
// target lacks is refused naming its key.
func TestPartialImages(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, `CREATE TABLE w (id INT NOT NULL PRIMARY KEY, a VARCHAR(20), b VARCHAR(20), c INT)`)
		partialImages(t, db)
	})
}

// partialImages runs TestPartialImages' cases into db's table w (id, a, b,
// c), which it empties before each.
func partialImages(t *testing.T, db *testdb.DB) {
	t.Helper()
	line := func(op string, row string) string {
		return fmt.Sprintf(`{"op":%q,"table":"shop.w","row":{%s}}`, op, row)
	}
	tests := []struct {
		name    string
		before  []string // applied by a run of their own first
		lines   []string
		want    string // the table after, ordered by id
		refused string // when set, the run fails with it and the table stays as before
	}{
		{"an insert then a partial update",
			nil, []string{line("+I", `"id":1,"a":"x","b":"y","c":7`), line("+U", `"id":1,"a":"z"`)},
			"1|z|y|7", ""},
		{"two partial updates of a stored row",
			[]string{line("+I", `"id":1,"a":"x","b":"y","c":7`)}, []string{line("+U", `"id":1,"a":"p"`), line("+U", `"id":1,"b":"q"`)},
			"1|p|q|7", ""},
		{"a partial update of a row the target lacks",
			[]string{line("+I", `"id":1,"a":"x","b":"y","c":7`)}, []string{line("+U", `"id":1,"a":"p"`), line("+U", `"id":9,"a":"p"`)},
			"1|x|y|7", "key (9)"},
	}
	n := 0
	for _, tt := range tests {
		for _, mode := range imageModes {
			t.Run(tt.name+"/"+mode.name, func(t *testing.T) {
				db.Exec(t, "DELETE FROM w")
				n++
				dir := t.TempDir()
				cfg := pipeline(db, config.Table{Source: "shop.w"})
				cfg.Name = fmt.Sprintf("partial-%d", n)
				if tt.before != nil {
					cfg.Source.Set("paths", []string{writeLines(t, dir, "before.jsonl", tt.before)})
					if r := runPipeline(t, cfg); r.err != nil {
						t.Fatal(r.err)
					}
					cfg.Name += "-after"
				}
				cfg.Source.Set("paths", []string{writeLines(t, dir, "changes.jsonl", tt.lines)})
				mode.set(cfg)
				r := runPipeline(t, cfg)
				if tt.refused != "" {
					if !errors.Is(r.err, sink.ErrMissingRow) || !strings.Contains(r.err.Error(), tt.refused) || !strings.Contains(r.err.Error(), "changes.jsonl:2") {
						t.Fatalf("run = %v, want the missing-row refusal of %s at changes.jsonl:2", r.err, tt.refused)
					}
				} else if r.err != nil {
					t.Fatal(r.err)
				}
				got := query(t, db, "SELECT id, a, b, c FROM w ORDER BY id")
				wants := []string{tt.want}
				switch {
				case tt.refused != "" && mode.name == "max-rows-1":
					// Line 1 committed alone before line 2 was refused.
					wants = []string{"1|p|y|7"}
				case tt.refused != "" && mode.name == "transaction":
					// Each line is a source transaction of its own:
					// line 1 may have committed before line 2's unit.
					wants = append(wants, "1|p|y|7")
				}
				if !slices.Contains(wants, got) {
					t.Errorf("table = %s, want one of %q", got, wants)
				}
			})
		}
	}
}

// TestRetractionPairs applies Flink changelogs whose updates come as a -U
// and a +U: a +U of the -U's key is an update, one of another key moves
// the row (the old key is deleted with the new one's upsert), and a -U no
// +U follows deletes nothing.
func TestRetractionPairs(t *testing.T) {
	rec := func(op string, id int, v string) string {
		return fmt.Sprintf(`{"data":{"id":%d,"v":%q},"op":%q}`, id, v, op)
	}
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"same key", []string{rec("+I", 1, "a"), rec("-U", 1, "a"), rec("+U", 1, "b")}, "1|b"},
		{"key moved", []string{rec("+I", 1, "a"), rec("-U", 1, "a"), rec("+U", 2, "a")}, "2|a"},
		{"lone -U at the end", []string{rec("+I", 1, "a"), rec("-U", 1, "a")}, "1|a"},
		{"-U then another change", []string{rec("+I", 1, "a"), rec("-U", 1, "a"), rec("+I", 3, "c"), rec("+U", 2, "a")}, "1|a\n2|a\n3|c"},
	}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, `CREATE TABLE r (id INT NOT NULL PRIMARY KEY, v VARCHAR(20))`)
		n := 0
		for _, tt := range tests {
			for _, mode := range imageModes {
				t.Run(tt.name+"/"+mode.name, func(t *testing.T) {
					db.Exec(t, "DELETE FROM r")
					n++
					cfg := pipeline(db, config.Table{Source: "shop.r"})
					cfg.Name = fmt.Sprintf("retract-%d", n)
					cfg.Source.Format = "flink-changelog-json"
					cfg.Source.FormatOptions = map[string]string{"flink-changelog-json.table": "shop.r"}
					cfg.Source.Set("paths", []string{writeLines(t, t.TempDir(), "changes.jsonl", tt.lines)})
					mode.set(cfg)
					if r := runPipeline(t, cfg); r.err != nil {
						t.Fatal(r.err)
					}
					if got := query(t, db, "SELECT id, v FROM r ORDER BY id"); got != tt.want {
						t.Errorf("table = %q, want %q", got, tt.want)
					}
				})
			}
		}
	})
}
