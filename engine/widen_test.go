package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/schema"
)

// canalTyped is a Canal message of inventory.orders whose column v has
// MySQL type typ and value v.
func canalTyped(typ string, id int, v string) string {
	return fmt.Sprintf(`{"data":[{"id":"%d","v":%q}],"old":null,"database":"inventory","table":"orders","type":"INSERT","isDdl":false,`+
		`"pkNames":["id"],"mysqlType":{"id":"bigint(20)","v":%q}}`, id, v, typ)
}

// dbzTyped is a Debezium record of inventory.orders with the schema
// envelope whose column v has the Connect field field (without its name).
func dbzTyped(field string, id int, v string) string {
	fields := `[{"type":"int64","optional":false,"field":"id"},` + strings.TrimSuffix(field, "}") + `,"field":"v"}]`
	return `{"schema":` + fmt.Sprintf(dbzSchema, fields) + `,"payload":{"before":null,"after":{"id":` + fmt.Sprint(id) + `,"v":` + v +
		`},"source":{"db":"inventory","table":"orders"},"op":"c"}}`
}

const dbzVarchar = `{"type":"string","optional":true,"parameters":{"__debezium.source.column.type":"VARCHAR","__debezium.source.column.length":"%d"}}`

// TestWiden streams changelogs in which the source widens a column
// mid-way, from an empty database on every server: with schema.evolve:
// widen the column is widened and every change lands exact; without it
// the run stops at the first value the column refuses, naming the
// table, the column, the position, the option and the statement. On
// SQLite, which bounds no text and no integer, those values land either
// way.
func TestWiden(t *testing.T) {
	cases := []struct {
		name, format string
		key          []string
		lines        []string
		want         string
		sqliteFits   bool // SQLite holds the wider values without widening
		check        func(c *schema.Column) bool
	}{
		{"varchar", "canal-json", nil, []string{canalTyped("varchar(5)", 1, "abcde"), canalTyped("varchar(10)", 2, "abcdefghi😀")},
			"1|abcde\n2|abcdefghi😀", true, func(c *schema.Column) bool { return c.Length == 10 }},
		{"decimal", "canal-json", nil, []string{canalTyped("decimal(5,2)", 1, "999.99"), canalTyped("decimal(8,2)", 2, "123456.78")},
			"1|999.99\n2|123456.78", false, func(c *schema.Column) bool { return c.Precision == 8 && c.Scale == 2 }},
		{"int", "canal-json", nil, []string{canalTyped("int(11)", 1, "2147483647"), canalTyped("bigint(20)", 2, "9000000000")},
			"1|2147483647\n2|9000000000", true, func(c *schema.Column) bool { return c.Bits == 64 }},
		{"datetime", "canal-json", nil, []string{canalTyped("datetime(3)", 1, "2020-05-13 07:40:06.123"), canalTyped("datetime(6)", 2, "2020-05-13 07:40:06.123456")},
			"", false, func(c *schema.Column) bool { return c.FracDigits == 6 }},
		{"debezium-varchar", "debezium-json", []string{"id"}, []string{dbzTyped(fmt.Sprintf(dbzVarchar, 3), 1, `"abc"`), dbzTyped(fmt.Sprintf(dbzVarchar, 6), 2, `"abcdef"`)},
			"1|abc\n2|abcdef", true, func(c *schema.Column) bool { return c.Length == 6 }},
		{"debezium-int", "debezium-json", []string{"id"}, []string{dbzTyped(`{"type":"int16","optional":true}`, 1, "32767"), dbzTyped(`{"type":"int32","optional":true}`, 2, "2000000000")},
			"1|32767\n2|2000000000", true, func(c *schema.Column) bool { return c.Bits >= 32 }},
	}
	for _, tc := range cases {
		for _, widen := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/widen=%v", tc.name, widen), func(t *testing.T) {
				forEachDialect(t, func(t *testing.T, db *testdb.DB) {
					cfg := creatingPipeline(t, db, tc.format, tc.key, tc.lines)
					if widen {
						cfg.Schema.Evolve = []string{config.SchemaEvolveAddColumns, config.SchemaEvolveWiden}
					}
					fits := db.Dialect == "sqlite" && tc.sqliteFits
					err := runOnce(t, cfg)
					if !widen && !fits {
						for _, w := range []string{"changes.jsonl:2", "orders", "column v", "schema.evolve: [widen]"} {
							if err == nil || !strings.Contains(err.Error(), w) {
								t.Errorf("got %v, want an error holding %q", err, w)
							}
						}
						if db.Dialect != "sqlite" && (err == nil || !strings.Contains(err.Error(), "ALTER TABLE")) {
							t.Errorf("got %v, want the statement named", err)
						}
						if got := query(t, db, "SELECT id FROM "+db.Quote("orders")); got != "" {
							t.Errorf("after the refusal: got %q, want nothing committed", got)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					if got := query(t, db, "SELECT id FROM "+db.Quote("orders")+" ORDER BY id"); got != "1\n2" {
						t.Errorf("ids: got %q, want 1 and 2", got)
					}
					if tc.want != "" {
						if got := query(t, db, "SELECT id, v FROM "+db.Quote("orders")+" ORDER BY id"); got != tc.want {
							t.Errorf("got\n%s\nwant\n%s", got, tc.want)
						}
					}
					st, err := tableOf(t, db, "orders")
					if err != nil {
						t.Fatal(err)
					}
					if c, ok := st.Column("v"); db.Dialect != "sqlite" && (!ok || !tc.check(c)) {
						t.Errorf("column v: %+v, want it widened", c)
					}
					if err := runOnce(t, cfg); err != nil {
						t.Fatalf("a second run: %v", err)
					}
				})
			})
		}
	}
}

// TestWidenRefused streams a changelog in which the source changes a
// column in a way that is no safe widening (a decimal's scale, an
// integer to text): under schema.evolve: widen the run stops at the
// first value the column refuses, naming the change and, on servers with
// an ALTER for it, the statement to run by hand; nothing is altered.
func TestWidenRefused(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		want  []string
		sql   string // the target's type afterwards, as tableOf's SQLType starts
	}{
		{"scale", []string{canalTyped("decimal(5,2)", 1, "999.99"), canalTyped("decimal(8,4)", 2, "1234.5678")},
			[]string{"a change of scale", "never makes"}, "decimal"},
		{"type", []string{canalTyped("int(11)", 1, "7"), canalTyped("varchar(10)", 2, "seven")},
			[]string{"a change of type", "never makes"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachDialect(t, func(t *testing.T, db *testdb.DB) {
				cfg := creatingPipeline(t, db, "canal-json", nil, tc.lines)
				cfg.Schema.Evolve = []string{config.SchemaEvolveWiden}
				err := runOnce(t, cfg)
				want := append([]string{"changes.jsonl:2", "column v"}, tc.want...)
				if db.Dialect != "sqlite" {
					want = append(want, "ALTER TABLE", "then run txsink again")
				}
				for _, w := range want {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Errorf("got %v, want an error holding %q", err, w)
					}
				}
				st, serr := tableOf(t, db, "orders")
				if serr != nil {
					t.Fatal(serr)
				}
				if c, _ := st.Column("v"); c == nil || (tc.name == "scale" && c.Scale != 2) || (tc.name == "type" && c.Class != schema.Int) {
					t.Errorf("column v: %+v, want it as created", c)
				}
			})
		})
	}
}

// TestWidenKeepsColumn widens a column a DBA created with a collation, a
// default and NOT NULL, on the servers that alter it: MariaDB's MODIFY
// COLUMN restates the whole column, so each of them must be kept, and
// PostgreSQL's ALTER COLUMN TYPE its collation.
func TestWidenKeepsColumn(t *testing.T) {
	ddl := map[string]string{
		"mysql":    "CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, v VARCHAR(5) CHARACTER SET latin1 COLLATE latin1_general_cs NOT NULL DEFAULT 'dflt' COMMENT 'kept')",
		"postgres": `CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, v VARCHAR(5) COLLATE "C" NOT NULL DEFAULT 'dflt')`,
	}
	catalog := map[string]string{
		"mysql": "SELECT COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, COLLATION_NAME, COLUMN_COMMENT FROM information_schema.COLUMNS " +
			"WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders' AND COLUMN_NAME = 'v'",
		"postgres": "SELECT character_maximum_length, is_nullable, column_default, collation_name FROM information_schema.columns " +
			"WHERE table_schema = current_schema() AND table_name = 'orders' AND column_name = 'v'",
	}
	want := map[string]string{
		"mysql":    "varchar(10)|NO|'dflt'|latin1_general_cs|kept",
		"postgres": "10|NO|'dflt'::character varying|C",
	}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		if ddl[db.Dialect] == "" {
			return // SQLite alters no column (TestWiden)
		}
		db.Exec(t, ddl[db.Dialect])
		cfg := creatingPipeline(t, db, "canal-json", nil, []string{canalTyped("varchar(5)", 1, "abcde"), canalTyped("varchar(10)", 2, "abcdefghij")})
		cfg.Schema.Evolve = []string{config.SchemaEvolveWiden}
		if err := runOnce(t, cfg); err != nil {
			t.Fatal(err)
		}
		if got := query(t, db, catalog[db.Dialect]); got != want[db.Dialect] {
			t.Errorf("column v: got %q, want %q", got, want[db.Dialect])
		}
		if got := query(t, db, "SELECT id, v FROM orders ORDER BY id"); got != "1|abcde\n2|abcdefghij" {
			t.Errorf("got %q", got)
		}
	})
}

// canalTwo is a Canal message of inventory.orders whose columns a and b
// have MySQL types ta and tb.
func canalTwo(ta, tb string, id int, a, b string) string {
	return fmt.Sprintf(`{"data":[{"id":"%d","a":%q,"b":%q}],"old":null,"database":"inventory","table":"orders","type":"INSERT","isDdl":false,`+
		`"pkNames":["id"],"mysqlType":{"id":"bigint(20)","a":%q,"b":%q}}`, id, a, b, ta, tb)
}

// TestWidenAllAtOnce streams a change whose record widens two columns:
// both are widened when the first refuses its value, so the pipeline
// starts again once, on every server.
func TestWidenAllAtOnce(t *testing.T) {
	lines := []string{
		canalTwo("decimal(5,2)", "datetime(3)", 1, "1.00", "2020-05-13 07:40:06.123"),
		canalTwo("decimal(8,2)", "datetime(6)", 2, "123456.78", "2020-05-13 07:40:06.123456"),
	}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		cfg := creatingPipeline(t, db, "canal-json", nil, lines)
		cfg.Schema.Evolve = []string{config.SchemaEvolveWiden}
		logs := &records{}
		e := newEngine(t, cfg, engine.WithLogger(slog.New(logs)))
		if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := len(logs.find("widened a column the source widened on the target table")); got != 2 {
			t.Errorf("%d columns widened, want 2", got)
		}
		if got := len(logs.find("a target table was altered while txsink ran; starting again from the last commit with its new definition")); got != 1 {
			t.Errorf("%d starts again, want 1", got)
		}
		if got := query(t, db, "SELECT id FROM "+db.Quote("orders")+" ORDER BY id"); got != "1\n2" {
			t.Errorf("ids %q, want 1 and 2", got)
		}
	})
}
