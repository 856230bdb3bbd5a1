package diagnose_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/diagnose"
	"github.com/txsink/txsink/internal/testdb"
)

// TestCheckRoutingRefusals: a sampled change whose target would be
// defaulted from a name that is not one plain identifier (a dot, a
// quote, a NUL) or that spells one of txsink's own tables is reported as
// the run refuses it — an error under bad-input: fail, a warning under
// dead-letter, where the run quarantines it — naming the position and
// the name, in every format that names tables in its records.
func TestCheckRoutingRefusals(t *testing.T) {
	names := []struct{ name, why string }{
		{"victim.t", "holds a dot"},
		{"t`; DROP TABLE t; --", "quote character `"},
		{`t"`, `quote character "`},
		{"t\x00", "control character U+0000"},
		{"TXSINK_PROGRESS", "txsink's own tables"},
		{"Txsink_Dead_Letters", "txsink's own tables"},
		{"txsink_progress ", "txsink's own tables"},
	}
	quote := func(s string) string {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	formats := []struct {
		format string
		record func(name string) string
	}{
		{"txsink-json", func(name string) string {
			return `{"op":"+I","table":` + quote("shop."+name) + `,"row":{"id":1,"name":"a"}}`
		}},
		{"debezium-json", func(name string) string {
			return `{"before":null,"after":{"id":1,"name":"a"},"source":{"connector":"mysql","db":"shop","table":` + quote(name) + `},"op":"c","ts_ms":1}`
		}},
		{"canal-json", func(name string) string {
			return `{"database":"shop","table":` + quote(name) + `,"type":"INSERT","isDdl":false,"es":1,"ts":1,"id":1,"data":[{"id":"1","name":"a"}]}`
		}},
		{"maxwell-json", func(name string) string {
			return `{"database":"shop","table":` + quote(name) + `,"type":"insert","ts":1,"data":{"id":1,"name":"a"}}`
		}},
		{"ogg-json", func(name string) string {
			return `{"table":` + quote("SHOP."+name) + `,"op_type":"I","op_ts":"2020-05-13 15:40:06.000000","pos":"1","after":{"id":1,"name":"a"}}`
		}},
	}
	for _, dialect := range testdb.Dialects {
		t.Run(dialect, func(t *testing.T) {
			db := testdb.Open(t, dialect)
			db.Exec(t, plainTable(dialect)...)
			for _, f := range formats {
				for _, mode := range []struct {
					top string
					sev diagnose.Severity
				}{{"", diagnose.Error}, {"bad-input: dead-letter\n", diagnose.Warning}} {
					t.Run(fmt.Sprintf("%s/%s", f.format, mode.sev), func(t *testing.T) {
						tc := tcase{format: f.format, top: mode.top, tables: "  - source: shop.*\n", records: []string{f.record("t")}}
						var wants []want
						for i, n := range names {
							tc.records = append(tc.records, f.record(n.name))
							wants = append(wants, want{sev: mode.sev, check: "table",
								contains: []string{fmt.Sprintf("p0.jsonl:%d:", i+2), strconv.Quote(n.name), n.why, "txsink run refuses", "target:"}})
						}
						checkFindings(t, dialect, runCase(t, db, tc), wants)
					})
				}
			}
		})
	}
}

// TestCheckRoutingRefusedEntry: an entry for one table whose route a run
// refuses at start-up (a Config built in Go, which Validate has not
// seen) is an error of 'txsink check' too.
func TestCheckRoutingRefusedEntry(t *testing.T) {
	db := testdb.Open(t, "sqlite")
	db.Exec(t, "CREATE TABLE orders (id INT NOT NULL PRIMARY KEY)")
	yaml := "name: diag\nsource:\n  type: file\n  paths: [p0.jsonl]\n  format: txsink-json\n" +
		"target:\n  url: \"" + db.URL + "\"\ntables:\n  - source: shop.t\n"
	dir := t.TempDir()
	// The source file is there: a run refuses to start without it, and
	// check says so.
	if err := os.WriteFile(filepath.Join(dir, "p0.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(yaml), dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tables = []config.Table{{Source: "shop.TXSINK_PROGRESS"}, {Source: "shop.orders", Target: "main.txsink_dead_letters"}, {Source: "shop.a.b"}}
	rep, err := diagnose.Run(context.Background(), cfg, diagnose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkFindings(t, "sqlite", rep, []want{
		{sev: diagnose.Error, check: "table", contains: []string{"shop.TXSINK_PROGRESS: ", `"TXSINK_PROGRESS" is one of txsink's own tables`}},
		{sev: diagnose.Error, check: "table", contains: []string{"shop.orders: ", `target "main.txsink_dead_letters" is one of txsink's own tables`}},
		{sev: diagnose.Error, check: "table", contains: []string{"shop.a.b: ", `"a.b" holds a dot`}},
	})
}
