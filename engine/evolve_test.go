package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/internal/testdb"
)

// dbzVersioned is a Debezium record of inventory.orders with the schema
// envelope, whose fields are id, name and, when extra, a column the
// source added later.
func dbzVersioned(extra bool, op, before, after string) string {
	fields := `[{"type":"int64","optional":false,"field":"id"},{"type":"string","optional":true,"field":"name"}`
	if extra {
		fields += `,{"type":"string","optional":true,"field":"extra","parameters":{"__debezium.source.column.type":"VARCHAR","__debezium.source.column.length":"5"}}`
	}
	fields += `]`
	return `{"schema":` + fmt.Sprintf(dbzSchema, fields) + `,"payload":{"before":` + before + `,"after":` + after +
		`,"source":{"db":"inventory","table":"orders"},"op":"` + op + `"}}`
}

// canalVersioned is a Canal message of inventory.orders whose mysqlType
// declares extra when the source has added it.
func canalVersioned(extra bool, typ, data, old string) string {
	types := `"id":"bigint(20)","name":"varchar(10)"`
	if extra {
		types += `,"extra":"varchar(5)"`
	}
	return `{"data":[` + data + `],"old":` + old + `,"database":"inventory","table":"orders","type":"` + typ +
		`","isDdl":false,"pkNames":["id"],"mysqlType":{` + types + `}}`
}

// TestAddColumns streams a changelog in which the source adds a column
// mid-way, from an empty database on every server: with schema.evolve:
// add-columns the column is added and every change lands exact; without
// it the run stops at the first change that carries it, naming the
// table, the column, the position and the option.
func TestAddColumns(t *testing.T) {
	formats := []struct {
		format string
		key    []string
		lines  []string
	}{
		{"debezium-json", []string{"id"}, []string{
			dbzVersioned(false, "c", "null", `{"id":1,"name":"a"}`),
			dbzVersioned(true, "c", "null", `{"id":2,"name":"b","extra":"x😀"}`),
			dbzVersioned(true, "u", `{"id":1,"name":"a","extra":null}`, `{"id":1,"name":"a","extra":"y"}`),
		}},
		{"canal-json", nil, []string{
			canalVersioned(false, "INSERT", `{"id":"1","name":"a"}`, "null"),
			canalVersioned(true, "INSERT", `{"id":"2","name":"b","extra":"x😀"}`, "null"),
			canalVersioned(true, "UPDATE", `{"id":"1","name":"a","extra":"y"}`, `[{"extra":null}]`),
		}},
	}
	for _, f := range formats {
		for _, evolve := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/evolve=%v", f.format, evolve), func(t *testing.T) {
				forEachDialect(t, func(t *testing.T, db *testdb.DB) {
					cfg := creatingPipeline(t, db, f.format, f.key, f.lines)
					if evolve {
						cfg.Schema.Evolve = []string{config.SchemaEvolveAddColumns}
					}
					err := runOnce(t, cfg)
					if !evolve {
						for _, w := range []string{"changes.jsonl:2", "orders", "column extra", "does not have", "schema.evolve: add-columns"} {
							if err == nil || !strings.Contains(err.Error(), w) {
								t.Errorf("got %v, want an error holding %q", err, w)
							}
						}
						// The refused change shares the flush of the first: nothing is committed.
						if got := query(t, db, "SELECT id, name FROM "+db.Quote("orders")); got != "" {
							t.Errorf("after the refusal: got %q, want nothing committed", got)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					if got, want := query(t, db, "SELECT id, name, extra FROM "+db.Quote("orders")+" ORDER BY id"), "1|a|y\n2|b|x😀"; got != want {
						t.Errorf("got\n%s\nwant\n%s", got, want)
					}
					st, err := tableOf(t, db, "orders")
					if err != nil {
						t.Fatal(err)
					}
					if c, ok := st.Column("extra"); !ok || !c.Nullable || (db.Dialect != "sqlite" && c.Length != 5) {
						t.Errorf("column extra: %+v, want a NULL-able string of 5 characters", c)
					}
					if err := runOnce(t, cfg); err != nil {
						t.Fatalf("a second run: %v", err)
					}
				})
			})
		}
	}
}
