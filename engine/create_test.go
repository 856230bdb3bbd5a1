package engine_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
)

// dbzDecimal is a Connect Decimal's value: the unscaled integer's
// big-endian two's-complement bytes, in base64.
func dbzDecimal(unscaled int64) string {
	b := big.NewInt(unscaled).Bytes()
	if len(b) == 0 || b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// dbzSchema is the Connect schema of table inventory.<table>: id int64,
// name VARCHAR(20) (propagated), price DECIMAL(10,2), seen
// MicroTimestamp, doc Json.
const dbzSchema = `{"type":"struct","fields":[` +
	`{"type":"struct","optional":true,"field":"before","fields":%[1]s},` +
	`{"type":"struct","optional":true,"field":"after","fields":%[1]s},` +
	`{"type":"struct","optional":false,"field":"source","fields":[]},` +
	`{"type":"string","optional":false,"field":"op"}],"optional":false,"name":"x.Envelope"}`

const dbzFields = `[{"type":"int64","optional":false,"field":"id"},` +
	`{"type":"string","optional":true,"field":"name","parameters":{"__debezium.source.column.type":"VARCHAR","__debezium.source.column.length":"20"}},` +
	`{"type":"bytes","optional":false,"field":"price","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2","connect.decimal.precision":"10"}},` +
	`{"type":"int64","optional":true,"field":"seen","name":"io.debezium.time.MicroTimestamp"},` +
	`{"type":"string","optional":true,"field":"doc","name":"io.debezium.data.Json"}]`

// dbzRow is one image of dbzFields.
func dbzRow(id int, name string, cents int64) string {
	return fmt.Sprintf(`{"id":%d,"name":%q,"price":%q,"seen":1589355606123456,"doc":"{\"k\":%d}"}`, id, name, dbzDecimal(cents), id)
}

// dbzEnvelope is a Debezium record with the schema envelope (withSchema) or
// without it.
func dbzEnvelope(withSchema bool, table, op string, before, after string) string {
	payload := fmt.Sprintf(`{"before":%s,"after":%s,"source":{"db":"inventory","table":%q},"op":%q}`, before, after, table, op)
	if !withSchema {
		return payload
	}
	return `{"schema":` + fmt.Sprintf(dbzSchema, dbzFields) + `,"payload":` + payload + `}`
}

// canalLine is a Canal flat message of table inventory.<table>.
func canalLine(table, typ, data, old string) string {
	return `{"data":[` + data + `],"old":` + old + `,"database":"inventory","table":"` + table + `","type":"` + typ + `","isDdl":false,` +
		`"pkNames":["id"],"mysqlType":{"id":"bigint(20)","name":"varchar(20)","price":"decimal(10,2)","seen":"datetime(6)","doc":"json"},"sqlType":{}}`
}

func canalRow(id int, name, price string) string {
	return fmt.Sprintf(`{"id":"%d","name":%q,"price":%q,"seen":"2020-05-13 07:40:06.123456","doc":"{\"k\":%d}"}`, id, name, price, id)
}

// TestCreateMissingTables starts from an empty database on every server
// with schema.create: missing, for each format that declares types: the
// tables the changelog routes are created from its declaration, with
// their key, and the changes land; a second run resumes on the created
// tables and applies nothing twice.
func TestCreateMissingTables(t *testing.T) {
	formats := []struct {
		format string
		key    []string // the entry's primary-key: Debezium's records declare none
		lines  []string
	}{
		{"debezium-json", []string{"id"}, []string{
			dbzEnvelope(true, "orders", "c", "null", dbzRow(1, "ab😀", 1250)),
			dbzEnvelope(true, "orders", "c", "null", dbzRow(2, "cd", -99999999)),
			dbzEnvelope(true, "items", "c", "null", dbzRow(7, "item", 5)),
			dbzEnvelope(true, "orders", "u", dbzRow(1, "ab😀", 1250), dbzRow(1, "ef", 1300)),
			dbzEnvelope(true, "orders", "d", dbzRow(2, "cd", -99999999), "null"),
		}},
		{"canal-json", nil, []string{
			canalLine("orders", "INSERT", canalRow(1, "ab😀", "12.50")+","+canalRow(2, "cd", "-999999.99"), "null"),
			canalLine("items", "INSERT", canalRow(7, "item", "0.05"), "null"),
			canalLine("orders", "UPDATE", canalRow(1, "ef", "13.00"), `[{"name":"ab😀","price":"12.50"}]`),
			canalLine("orders", "DELETE", canalRow(2, "cd", "-999999.99"), "null"),
		}},
	}
	for _, f := range formats {
		t.Run(f.format, func(t *testing.T) {
			forEachDialect(t, func(t *testing.T, db *testdb.DB) {
				cfg := creatingPipeline(t, db, f.format, f.key, f.lines)
				for run := 1; run <= 2; run++ {
					if err := runOnce(t, cfg); err != nil {
						t.Fatalf("run %d: %v", run, err)
					}
					got := query(t, db, "SELECT id, name, price FROM "+db.Quote("orders")+" ORDER BY id") + "\n" +
						query(t, db, "SELECT id, name, price FROM "+db.Quote("items"))
					if want := "1|ef|13\n7|item|0.05"; got != want {
						t.Errorf("run %d: got\n%s\nwant\n%s", run, got, want)
					}
				}
				st, err := tableOf(t, db, "orders")
				if err != nil {
					t.Fatal(err)
				}
				if strings.Join(st.PrimaryKey, ",") != "id" {
					t.Errorf("primary key %v, want [id]", st.PrimaryKey)
				}
				for _, c := range st.Columns {
					if want := c.Name != "price" && c.Name != "id"; c.Nullable != want && f.format == "debezium-json" {
						t.Errorf("column %s: nullable %v, want %v (the Connect schema's optional)", c.Name, c.Nullable, want)
					}
				}
			})
		})
	}
}

// TestCreateRefusals checks what schema.create: missing refuses, and that
// each refusal says what to do: a format that carries no types (at
// start), a Debezium record without the schema envelope and one whose
// schema declares no key (at the change, the table still missing).
func TestCreateRefusals(t *testing.T) {
	db := testdb.Open(t, "sqlite")
	cases := []struct {
		name   string
		format string
		key    []string
		lines  []string
		atNew  bool
		want   []string
	}{
		{"maxwell carries no types", "maxwell-json", []string{"id"},
			[]string{`{"database":"inventory","table":"orders","type":"insert","ts":1,"data":{"id":1}}`}, true,
			[]string{"cannot create target tables from maxwell-json records: they carry no column types", "value.converter.schemas.enable=true", "canal-json", "create the target tables yourself"}},
		{"ogg carries no types", "ogg-json", []string{"id"}, nil, true, []string{"ogg-json records: they carry no column types"}},
		{"flink changelog-json carries no types", "flink-changelog-json", []string{"id"}, nil, true, []string{"flink-changelog-json records: they carry no column types"}},
		{"debezium without the envelope", "debezium-json", []string{"id"},
			[]string{dbzEnvelope(false, "orders", "c", "null", `{"id":1}`)}, false,
			[]string{"changes.jsonl:1", "the target table orders does not exist, and schema.create: missing cannot create it: the record carries no column types", "value.converter.schemas.enable=true", "create the table yourself"}},
		{"debezium without a key", "debezium-json", nil,
			[]string{dbzEnvelope(true, "orders", "c", "null", dbzRow(1, "a", 1))}, false,
			[]string{"the Kafka Connect schema does not say which columns form the primary key", "set primary-key on its tables entry"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeLines(t, t.TempDir(), "changes.jsonl", tc.lines)
			cfg := pipeline(db, config.Table{Source: "inventory.*", PrimaryKey: tc.key})
			cfg.Name = "refusal"
			cfg.Source.Format = tc.format
			if tc.format == "flink-changelog-json" {
				cfg.Source.FormatOptions = map[string]string{"flink-changelog-json.table": "inventory.orders"}
			}
			cfg.Source.Set("paths", []string{path})
			cfg.Schema.Create = config.SchemaCreateMissing
			e, err := engine.New(context.Background(), cfg)
			if err == nil {
				t.Cleanup(func() { e.Close() })
				if tc.atNew {
					t.Fatal("engine.New took the format")
				}
				err = e.Run(context.Background(), engine.RunOptions{})
			} else if !tc.atNew {
				t.Fatalf("engine.New: %v", err)
			}
			var se *engine.SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("got %v (%T), want a *engine.SchemaError", err, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
			if _, err := tableOf(t, db, "orders"); err == nil {
				t.Error("a table was created")
			}
		})
	}
}

// creatingPipeline is a pipeline of the tables inventory.* (keyed by key)
// in a file of lines of format, with schema.create: missing.
func creatingPipeline(t *testing.T, db *testdb.DB, format string, key, lines []string) *config.Config {
	t.Helper()
	cfg := pipeline(db, config.Table{Source: "inventory.*", PrimaryKey: key})
	cfg.Source.Format = format
	cfg.Source.Set("paths", []string{writeLines(t, t.TempDir(), "changes.jsonl", lines)})
	cfg.Schema.Create = config.SchemaCreateMissing
	return cfg
}

// tableOf describes target table name of db through a sink of its own.
func tableOf(t *testing.T, db *testdb.DB, name string) (*schema.Table, error) {
	t.Helper()
	s, err := sink.Open(context.Background(), db.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return s.Describe(context.Background(), schema.Name{Name: name})
}
