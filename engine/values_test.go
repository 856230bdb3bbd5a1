package engine_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/internal/testdb"
)

// hexOf is the SQL that renders binary column c as lowercase hex.
func hexOf(dialect, c string) string {
	switch dialect {
	case "mysql":
		return "LOWER(HEX(" + c + "))"
	case "postgres":
		return "encode(" + c + ", 'hex')"
	}
	return "lower(hex(" + c + "))"
}

// TestUnavailableValuePlaceholderKeepsStoredValue is finding 2 of issue 24
// as a user meets it: Debezium's PostgreSQL connector, on a table with
// REPLICA IDENTITY DEFAULT, sends updates without a before image whose
// unchanged TOASTed columns hold __debezium_unavailable_value (its base64
// for bytea, ["..."] for text[]). Each update is a run, and so a flush, of
// its own; each sets the title and leaves doc, bin (and tags) as stored,
// with and without the schema envelope, and the run succeeds.
//
// The columns are nullable: an upsert of a partial image into a table with
// a NOT NULL column and no default is refused by the servers (the INSERT
// half misses the column), which is partial images' business, not the
// placeholder's.
func TestUnavailableValuePlaceholderKeepsStoredValue(t *testing.T) {
	const ph = "__debezium_unavailable_value"
	phBase64 := base64.StdEncoding.EncodeToString([]byte(ph))
	stored := []byte("\x00\x01 the stored bytes")
	ddl := map[string]string{
		"mysql":    `CREATE TABLE docs (id INT NOT NULL PRIMARY KEY, title VARCHAR(20) NOT NULL, doc TEXT NULL, bin BLOB NULL)`,
		"postgres": `CREATE TABLE docs (id INT NOT NULL PRIMARY KEY, title VARCHAR(20) NOT NULL, doc TEXT NULL, bin BYTEA NULL, tags TEXT[] NULL)`,
		"sqlite":   `CREATE TABLE docs (id INTEGER NOT NULL PRIMARY KEY, title VARCHAR(20) NOT NULL, doc TEXT NULL, bin BLOB NULL)`,
	}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, ddl[db.Dialect])
		arrays := db.Dialect == "postgres"
		// row is an image's JSON, tags a JSON array or "" for none.
		row := func(title, doc, bin, tags string) string {
			r := `{"id":1,"title":"` + title + `","doc":"` + doc + `","bin":"` + bin + `"`
			if arrays && tags != "" {
				r += `,"tags":` + tags
			}
			return r + "}"
		}
		fields := `{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":false,"field":"title"},` +
			`{"type":"string","optional":true,"field":"doc"},{"type":"bytes","optional":true,"field":"bin"}`
		if arrays {
			fields += `,{"type":"array","items":{"type":"string","optional":true},"optional":true,"field":"tags"}`
		}
		source := `"source":{"connector":"postgresql","db":"shop","schema":"shop","table":"docs"}`
		bare := func(op, after string) string {
			return `{"before":null,"after":` + after + `,` + source + `,"op":"` + op + `"}`
		}
		withSchema := func(op, after string) string {
			value := `{"type":"struct","fields":[` + fields + `],"optional":true,"name":"pg.shop.docs.Value","field":"%s"}`
			schema := `{"type":"struct","fields":[` + fmt.Sprintf(value, "before") + `,` + fmt.Sprintf(value, "after") +
				`,{"type":"struct","fields":[],"field":"source"},{"type":"string","field":"op"}],"name":"pg.shop.docs.Envelope"}`
			return `{"schema":` + schema + `,"payload":` + bare(op, after) + `}`
		}
		lines := []string{
			withSchema("c", row("a", "the stored text", base64.StdEncoding.EncodeToString(stored), "")),
			bare("u", row("b", ph, phBase64, `["`+ph+`"]`)),
			withSchema("u", row("c", ph, phBase64, `["`+ph+`"]`)),
			bare("u", row("d", ph, phBase64, `[ "`+ph+`" ]`)),
		}
		path := filepath.Join(t.TempDir(), "docs.jsonl")
		cfg := pipeline(db, config.Table{Source: "shop.docs", Target: "docs"})
		cfg.Name = "placeholder"
		cfg.Source.Set("paths", []string{path})
		cfg.Source.Format = "debezium-json"
		cfg.Source.FormatOptions = map[string]string{"debezium.allow-missing-before": "true"}
		q := "SELECT id, title, doc, " + hexOf(db.Dialect, "bin") + " FROM docs"
		if arrays {
			q = "SELECT id, title, doc, " + hexOf(db.Dialect, "bin") + ", tags::text FROM docs"
		}
		for i := range lines {
			if err := os.WriteFile(path, []byte(strings.Join(lines[:i+1], "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := runOnce(t, cfg); err != nil {
				t.Fatalf("run to line %d: %v", i+1, err)
			}
			if i == 0 && arrays {
				// txsink does not write JSON arrays into PostgreSQL arrays;
				// the stored value is set as the source had it.
				db.Exec(t, `UPDATE docs SET tags = '{x,y}'`)
			}
			want := fmt.Sprintf("1|%c|the stored text|%x", 'a'+i, stored)
			if arrays {
				want += "|{x,y}"
			}
			if got := query(t, db, q); got != want {
				t.Errorf("after line %d:\n%s\nwant\n%s", i+1, got, want)
			}
		}
		if got := query(t, db, "SELECT seq FROM txsink_progress WHERE pipeline = 'placeholder'"); got != "4" {
			t.Errorf("progress at line %s, want 4", got)
		}
	})
}

// TestLoneSurrogatesAreBadInput is finding 4 of issue 24 on every server: a
// record whose key or value holds a lone or reversed surrogate escape
// stops the run, naming the position, table, column and escape, after
// committing what came before; under bad-input: dead-letter each is
// quarantined and the keys "a\ud800", "a\udbff" and "a\udfff" are never
// one key. A surrogate pair and a U+FFFD the source wrote are data.
func TestLoneSurrogatesAreBadInput(t *testing.T) {
	line := func(op, k, s string) string {
		r := `{"k":"` + k + `"`
		if s != "" {
			r += `,"s":"` + s + `"`
		}
		return `{"op":"` + op + `","row":` + r + `},"table":"shop.texts"}`
	}
	lines := []string{
		line("+I", "a", `\ud83d\ude00`),
		line("+I", `a\ud800`, "x"),
		line("+I", `a\udbff`, "y"),
		line("-D", `a\udfff`, ""),
		line("+I", "b", `a\ud800b`),
		line("+I", "c", `\ufffd`),
		line("+I", "d", `\udc00\ud800`),
	}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, `CREATE TABLE texts (k VARCHAR(20) NOT NULL PRIMARY KEY, s VARCHAR(20) NULL)`)
		path := writeLines(t, t.TempDir(), "texts.jsonl", lines)
		cfg := pipeline(db, config.Table{Source: "shop.texts", Target: "texts"})
		cfg.Name = "surrogates"
		cfg.Source.Set("paths", []string{path})
		cfg.Sink.FlushMaxRows = 1

		err := runOnce(t, cfg)
		var fe *format.Error
		if !errors.As(err, &fe) {
			t.Fatalf("run: %v (%T), want a *format.Error", err, err)
		}
		at := fmt.Sprintf("at byte %d", strings.Index(lines[1], `\ud800`))
		for _, w := range []string{"texts.jsonl:2", "table shop.texts", `"row" image column "k"`, `lone surrogate \ud800`, at, "U+FFFD"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error lacks %q:\n%v", w, err)
			}
		}
		if got, want := query(t, db, "SELECT k, s FROM texts ORDER BY k"), "a|😀"; got != want {
			t.Errorf("rows after the refusal:\n%s\nwant\n%s", got, want)
		}

		cfg.BadInput = config.BadInputDeadLetter
		if err := runOnce(t, cfg); err != nil {
			t.Fatalf("run with bad-input: dead-letter: %v", err)
		}
		if got, want := query(t, db, "SELECT k, s FROM texts ORDER BY k"), "a|😀\nc|\uFFFD"; got != want {
			t.Errorf("rows:\n%s\nwant\n%s", got, want)
		}
		got := query(t, db, "SELECT seq, reason FROM txsink_dead_letters ORDER BY seq")
		for i, seq := range []string{"2", "3", "4", "5", "7"} {
			letters := strings.Split(got, "\n")
			if i >= len(letters) || !strings.HasPrefix(letters[i], seq+"|") || !strings.Contains(letters[i], "lone surrogate") {
				t.Errorf("dead letter %d: want line %s refused for a lone surrogate; dead letters:\n%s", i, seq, got)
			}
		}
	})
}
