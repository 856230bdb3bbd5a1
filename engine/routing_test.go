package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/sink"
)

// routeFormat writes records of one format whose table-name field the
// routing tests fill with hostile names.
type routeFormat struct {
	name   string
	format string
	// options returns the format's options for records of table name
	// (flink-changelog-json names its table there); nil: none.
	options func(name string) map[string]string
	// tables routes the changes; the last entry is the wildcard the
	// hostile names come through.
	tables []config.Table
	// record returns one insert of the table called name in the
	// format's namespace, with image img (a JSON object).
	record func(name, img string) string
	// good is the name record takes for the table "ok" of the target,
	// "" when the format cannot mix tables in one file.
	good string
	// trims says the format drops white space around the table's name,
	// so a refusal quotes the name without it.
	trims bool
}

func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// routeFormats covers the table-name field of every format.
var routeFormats = []routeFormat{{
	name: "txsink-json", format: "txsink-json", good: "ok",
	tables: []config.Table{{Source: "inventory.*"}},
	record: func(name, img string) string {
		return `{"op":"+I","table":` + jsonString("inventory."+name) + `,"row":` + img + `}`
	},
}, {
	name: "debezium-json source.table", format: "debezium-json", good: "ok",
	tables: []config.Table{{Source: "inventory.*"}},
	record: func(name, img string) string {
		return `{"before":null,"after":` + img + `,"source":{"connector":"mysql","name":"srv","db":"inventory","table":` + jsonString(name) +
			`},"op":"c","ts_ms":1700000000000}`
	},
}, {
	// The PostgreSQL connector names the schema in source.schema, which
	// is the namespace; source.db is the database and plays no part.
	name: "debezium-json source.schema", format: "debezium-json", good: "ok",
	tables: []config.Table{{Source: "inventory.*"}},
	record: func(name, img string) string {
		return `{"before":null,"after":` + img + `,"source":{"connector":"postgresql","name":"srv","db":"appdb","schema":"inventory","table":` + jsonString(name) +
			`},"op":"c","ts_ms":1700000000000}`
	},
}, {
	name: "canal-json", format: "canal-json", good: "ok",
	tables: []config.Table{{Source: "inventory.*"}},
	record: func(name, img string) string {
		return `{"database":"inventory","table":` + jsonString(name) + `,"type":"INSERT","isDdl":false,"es":1,"ts":1,"id":1,"data":[` + img + `]}`
	},
}, {
	name: "maxwell-json", format: "maxwell-json", good: "ok",
	tables: []config.Table{{Source: "inventory.*"}},
	record: func(name, img string) string {
		return `{"database":"inventory","table":` + jsonString(name) + `,"type":"insert","ts":1596684883,"data":` + img + `}`
	},
}, {
	name: "ogg-json SCHEMA.TABLE", format: "ogg-json", good: "ok",
	tables: []config.Table{{Source: "inventory.*"}},
	record: func(name, img string) string {
		return `{"table":` + jsonString("INVENTORY."+name) + `,"op_type":"I","op_ts":"2020-05-13 15:40:06.000000","pos":"00000000000000000000143","after":` + img + `}`
	},
}, {
	// A three-part name (a multitenant database's PDB.SCHEMA.TABLE)
	// splits at its first dot, so its name part holds a dot: it reaches
	// a target only through an entry that routes it explicitly.
	name: "ogg-json CAT.SCHEMA.TABLE", format: "ogg-json", good: "INVENTORY.ok",
	tables: []config.Table{{Source: "pdb.inventory.ok", Target: "ok"}, {Source: "pdb.*"}},
	record: func(name, img string) string {
		return `{"table":` + jsonString("PDB."+name) + `,"op_type":"I","op_ts":"2020-05-13 15:40:06.000000","pos":"00000000000000000000143","after":` + img + `}`
	},
}, {
	name: "flink-changelog-json", format: "flink-changelog-json", trims: true,
	tables: []config.Table{{Source: "inventory.*"}},
	options: func(name string) map[string]string {
		return map[string]string{"flink-changelog-json.table": "inventory." + name}
	},
	record: func(_, img string) string { return `{"data":` + img + `,"op":"+I"}` },
}}

// routeName is one hostile table name and what its refusal says.
type routeName struct {
	label string
	name  string
	img   string // the row the record carries
	want  string // in the reason
}

// routeNames returns the hostile names for a target whose own namespace
// is own, beside a namespace victim holding a table t.
func routeNames(own, victim string) []routeName {
	const id = `{"id":7}`
	// A progress row that, written, would make the pipeline skip data.
	const forged = `{"pipeline":"forged","source_partition":"p0","position":999999,"seq":999,"epoch":1}`
	return []routeName{
		{"dot into another namespace", victim + ".t", id, "holds a dot"},
		{"dot into the own namespace", own + ".txsink_progress", forged, "holds a dot"},
		{"backtick", "t`; DROP TABLE ok; --", id, "quote character"},
		{"double quote", `t"; DROP TABLE ok; --`, id, "quote character"},
		{"NUL", "t\x00", id, "control character"},
		{"progress table in capitals", "TXSINK_PROGRESS", forged, "txsink's own tables"},
		{"dead-letter table, mixed case", "Txsink_Dead_Letters", forged, "txsink's own tables"},
		{"progress table, trailing space", "txsink_progress ", forged, "txsink's own tables"},
	}
}

// victimNamespace creates a table t in a namespace beside db's own
// (testdb.DB.Neighbour) and returns db's own namespace, the victim's,
// and t's name qualified in it.
func victimNamespace(t *testing.T, db *testdb.DB) (own, victim, qualified string) {
	t.Helper()
	own, victim = db.Namespace(t), db.Neighbour(t)
	qualified = db.Quote(victim) + ".t"
	db.Exec(t, "CREATE TABLE "+qualified+" (id INT NOT NULL PRIMARY KEY)")
	return own, victim, qualified
}

// TestRoutingConfined feeds every format's table-name field names that
// hold a dot, a quote or a NUL, or spell one of txsink's own tables,
// through a wildcard entry whose target defaults to the source's name.
// Each is refused at its record, naming its position and the name: under
// bad-input: fail the run stops with nothing committed, under
// dead-letter the record is quarantined and the records around it are
// applied. No row ever lands outside the target's own namespace, and
// txsink's own tables hold nothing forged.
func TestRoutingConfined(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		own, victim, victimTable := victimNamespace(t, db)
		db.Exec(t, `CREATE TABLE ok (id INT NOT NULL PRIMARY KEY)`)
		n := 0
		for _, f := range routeFormats {
			for _, rn := range routeNames(own, victim) {
				for _, mode := range routeModes {
					n++
					t.Run(f.name+"/"+rn.label+"/"+mode.name, func(t *testing.T) {
						// Checked however the case ends, Fatal included.
						defer func() {
							if got := query(t, db, "SELECT COUNT(*) FROM "+victimTable); got != "0" {
								t.Errorf("%s has %s rows, want 0", victimTable, got)
							}
							if got := query(t, db, "SELECT COUNT(*) FROM txsink_progress WHERE pipeline = 'forged' OR position = 999999 OR seq = 999"); got != "0" {
								t.Errorf("a forged progress row was written: %s", query(t, db, "SELECT pipeline, source_partition, position, seq FROM txsink_progress"))
							}
						}()
						checkRoutingRefused(t, db, f, rn, n, mode)
					})
				}
			}
		}
	})
}

// routeMode is how a pipeline treats the refused record.
type routeMode struct {
	name       string
	deadLetter bool // bad-input: dead-letter
	txn        bool // transaction.multi-table.enabled, each change a transaction
}

var routeModes = []routeMode{
	{name: "fail"},
	{name: "dead-letter", deadLetter: true},
	{name: "transactions, dead-letter", deadLetter: true, txn: true},
}

// checkRoutingRefused runs case n: a record of table rn.name between two
// of table ok (when the format can mix tables), and checks the refusal.
func checkRoutingRefused(t *testing.T, db *testdb.DB, f routeFormat, rn routeName, n int, mode routeMode) {
	t.Helper()
	var lines []string
	badLine := 1
	if f.good != "" {
		lines = append(lines, f.record(f.good, fmt.Sprintf(`{"id":%d}`, n*10+1)))
		badLine = 2
	}
	lines = append(lines, f.record(rn.name, rn.img))
	if f.good != "" {
		lines = append(lines, f.record(f.good, fmt.Sprintf(`{"id":%d}`, n*10+3)))
	}
	path := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := pipeline(db, f.tables...)
	cfg.Name = fmt.Sprintf("route-%d", n)
	cfg.Source.Format = f.format
	cfg.Source.Set("paths", []string{path})
	if f.options != nil {
		cfg.Source.FormatOptions = f.options(rn.name)
	}
	if mode.deadLetter {
		cfg.BadInput = config.BadInputDeadLetter
	}
	if mode.txn {
		txnPipeline(cfg)
	}
	e := newEngine(t, cfg)
	err := e.Run(context.Background(), engine.RunOptions{})
	pos := fmt.Sprintf("in.jsonl:%d", badLine)
	okRows := query(t, db, fmt.Sprintf("SELECT id FROM ok WHERE id BETWEEN %d AND %d ORDER BY id", n*10, n*10+9))
	if !mode.deadLetter {
		var re *reduce.Error
		switch {
		case err == nil:
			t.Fatalf("the record of %q was accepted", rn.name)
		case !errors.As(err, &re):
			t.Errorf("err = %v, want bad input (*reduce.Error)", err)
		}
		checkRefusal(t, err.Error(), pos, f, rn)
		if okRows != "" {
			t.Errorf("ok holds %q, want nothing committed", okRows)
		}
		if got := query(t, db, "SELECT COUNT(*) FROM txsink_progress WHERE position > 0 AND pipeline = '"+cfg.Name+"'"); got != "0" {
			t.Errorf("progress moved: %s", query(t, db, "SELECT source_partition, position, seq FROM txsink_progress WHERE pipeline = '"+cfg.Name+"'"))
		}
		return
	}
	if err != nil {
		t.Fatalf("run with dead-letter policy: %v", err)
	}
	rows, err := e.Target().(sink.DeadLetterer).DeadLetters(context.Background(), cfg.Name)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Seq != int64(badLine) {
		t.Fatalf("dead letters %+v, want one, of line %d", rows, badLine)
	}
	checkRefusal(t, rows[0].Reason, pos, f, rn)
	if want := fmt.Sprintf("%d\n%d", n*10+1, n*10+3); f.good != "" && okRows != want {
		t.Errorf("ok holds %q, want %q: the records around the refused one are applied", okRows, want)
	}
	if got, want := query(t, db, "SELECT seq FROM txsink_progress WHERE pipeline = '"+cfg.Name+"'"), strconv.Itoa(len(lines)); got != want {
		t.Errorf("progress seq = %s, want %s", got, want)
	}
}

// checkRefusal checks that a refusal names the position, the table as
// the source spelled it, why, and what to do.
func checkRefusal(t *testing.T, msg, pos string, f routeFormat, rn routeName) {
	t.Helper()
	t.Logf("refused: %s", msg)
	spelled := rn.name
	if f.trims {
		spelled = strings.TrimSpace(spelled)
	}
	for _, want := range []string{pos, strconv.Quote(spelled), rn.want, "target:"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q does not say %q", msg, want)
		}
	}
}

// TestRoutingRefusedAtStart: an entry for one table whose route Resolve
// refuses — a target of txsink's own, however spelled and in whatever
// schema, or a fixed source whose name is not one plain identifier —
// stops engine.New (a Config built in Go, which Validate has not seen)
// with an error naming the entry, before anything is read.
func TestRoutingRefusedAtStart(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		own := db.Namespace(t)
		for _, tc := range []struct {
			entry config.Table
			want  string
		}{
			{config.Table{Source: "shop.orders", Target: "TXSINK_PROGRESS"}, "txsink's own tables"},
			{config.Table{Source: "shop.orders", Target: own + ".txsink_progress"}, "txsink's own tables"},
			{config.Table{Source: "shop.orders", Target: "public.Txsink_Dead_Letters"}, "txsink's own tables"},
			{config.Table{Source: "shop.txsink_progress"}, "txsink's own tables"},
			{config.Table{Source: "shop.victim.t"}, "holds a dot"},
			{config.Table{Source: "shop.t`"}, "quote character"},
		} {
			t.Run(tc.entry.Source+" -> "+tc.entry.Target, func(t *testing.T) {
				e, err := engine.New(context.Background(), pipeline(db, tc.entry))
				if err == nil {
					e.Close()
					t.Fatalf("engine.New accepted %+v", tc.entry)
				}
				if !strings.Contains(err.Error(), "tables[0] ("+tc.entry.Source+")") || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("err = %v, want it to name tables[0] and say %q", err, tc.want)
				}
			})
		}
	})
}
