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
		{"txsink-json without types", "txsink-json", []string{"id"},
			[]string{`{"op":"+I","table":"inventory.orders","row":{"id":1}}`}, false,
			[]string{"changes.jsonl:1", "cannot create it: the record carries no column types", `txsink-json: a "types" member`}},
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
			refused(t, cfg, tc.atNew, tc.want)
			if _, err := tableOf(t, db, "orders"); err == nil {
				t.Error("a table was created")
			}
		})
	}
}

// refused runs cfg and checks that it stops with a *engine.SchemaError
// holding every string of want: at engine.New when atNew, else in Run.
func refused(t *testing.T, cfg *config.Config, atNew bool, want []string) {
	t.Helper()
	e, err := engine.New(context.Background(), cfg)
	if err == nil {
		t.Cleanup(func() { e.Close() })
		if atNew {
			t.Fatal("engine.New took the pipeline")
		}
		err = e.Run(context.Background(), engine.RunOptions{})
	} else if !atNew {
		t.Fatalf("engine.New: %v", err)
	}
	var se *engine.SchemaError
	if !errors.As(err, &se) {
		t.Fatalf("got %v (%T), want a *engine.SchemaError", err, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q\nlacks %q", err, w)
		}
	}
}

// maxwellLine is a Maxwell record of table inventory.<table>.
func maxwellLine(table, typ, data, old string) string {
	l := fmt.Sprintf(`{"database":"inventory","table":%q,"type":%q,"ts":1,"xid":1,"commit":true,"data":%s`, table, typ, data)
	if old != "" {
		l += `,"old":` + old
	}
	return l + "}"
}

// declaredColumns are the columns the tests' tables entries declare.
func declaredColumns() []config.Column {
	f, zero := false, "0"
	return []config.Column{
		{Name: "id", Type: "bigint"},
		{Name: "email", Type: "varchar(40)", Null: &f},
		{Name: "born", Type: "date"},
		{Name: "score", Type: "decimal(10,2)", Default: &zero},
	}
}

// TestCreateDeclaredColumns starts from an empty database on every server
// with schema.create: missing and a maxwell-json stream, whose records
// carry no types: each table the entry's pattern routes is created from
// the entry's declared columns (the same for each), with its key and NOT
// NULL where declared, and the changes land; a second run applies
// nothing twice.
func TestCreateDeclaredColumns(t *testing.T) {
	lines := []string{
		maxwellLine("customers", "insert", `{"id":1,"email":"a@x.org","born":"1990-01-02","score":"12.50"}`, ""),
		maxwellLine("customers", "insert", `{"id":2,"email":"b@x.org","born":null,"score":"-0.01"}`, ""),
		maxwellLine("suppliers", "insert", `{"id":7,"email":"s@x.org","born":"9999-12-31"}`, ""),
		maxwellLine("customers", "update", `{"id":1,"email":"é😀@x.org","born":"1990-01-02","score":"99999999.99"}`, `{"email":"a@x.org"}`),
		maxwellLine("customers", "delete", `{"id":2,"email":"b@x.org","born":null,"score":"-0.01"}`, ""),
	}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		cfg := creatingPipeline(t, db, "maxwell-json", []string{"id"}, lines)
		cfg.Tables[0].Columns = declaredColumns()
		if err := engine.TypedFormat(cfg); err != nil {
			t.Fatalf("TypedFormat refuses a pipeline whose entry declares its columns: %v", err)
		}
		score := "score"
		if db.Dialect == "sqlite" {
			score = "CAST(score AS TEXT)" // SQLite keeps a decimal as REAL; its text is exact
		}
		for run := 1; run <= 2; run++ {
			if err := runOnce(t, cfg); err != nil {
				t.Fatalf("run %d: %v", run, err)
			}
			got := query(t, db, "SELECT id, email, born, "+score+" FROM "+db.Quote("customers")+" ORDER BY id") + "\n" +
				query(t, db, "SELECT id, email, born, "+score+" FROM "+db.Quote("suppliers"))
			if want := "1|é😀@x.org|1990-01-02 00:00:00.000|99999999.99\n7|s@x.org|9999-12-31 00:00:00.000|0"; got != want {
				t.Errorf("run %d: got\n%s\nwant\n%s", run, got, want)
			}
		}
		for _, name := range []string{"customers", "suppliers"} {
			st, err := tableOf(t, db, name)
			if err != nil {
				t.Fatal(err)
			}
			checkDeclared(t, st)
		}
	})
}

// checkDeclared checks that st is the table declaredColumns declares,
// keyed by id.
func checkDeclared(t *testing.T, st *schema.Table) {
	t.Helper()
	if strings.Join(st.PrimaryKey, ",") != "id" {
		t.Errorf("%s: primary key %v, want [id]", st, st.PrimaryKey)
	}
	want := map[string]struct {
		class    schema.Class
		nullable bool
	}{"id": {schema.Int, false}, "email": {schema.String, false}, "born": {schema.Date, true}, "score": {schema.Decimal, true}}
	var names []string
	for _, c := range st.Columns {
		names = append(names, c.Name)
		w, ok := want[c.Name]
		switch {
		case !ok:
			t.Errorf("%s: column %s was not declared", st, c.Name)
		case c.Nullable != w.nullable:
			t.Errorf("%s: column %s nullable %v, want %v", st, c.Name, c.Nullable, w.nullable)
		case c.Class != w.class && !(c.Class == schema.Float && w.class == schema.Decimal): // SQLite's REAL
			t.Errorf("%s: column %s is %s, want %s", st, c.Name, c.Class, w.class)
		}
		if c.Name == "email" && c.Length != 40 && c.Length != 0 { // SQLite's TEXT has no length
			t.Errorf("%s: email has length %d, want the declared 40", st, c.Length)
		}
	}
	if got := strings.Join(names, ","); got != "id,email,born,score" {
		t.Errorf("%s: columns %s, want the declared order id,email,born,score", st, got)
	}
}

// TestCreateDeclaredWins creates a table from a Debezium stream with the
// schema envelope whose entry declares its columns: the declaration wins
// over the record's types (email VARCHAR(40), not the record's
// VARCHAR(20); no price, doc or seen column), and a column the records
// carry beyond it is refused without schema.evolve, as on any table.
func TestCreateDeclaredWins(t *testing.T) {
	db := testdb.Open(t, "mysql")
	lines := []string{dbzEnvelope(true, "orders", "c", "null", dbzRow(1, "ab", 1250))}
	cfg := creatingPipeline(t, db, "debezium-json", []string{"id"}, lines)
	cfg.Tables[0].Columns = declaredColumns()
	err := runOnce(t, cfg)
	t.Logf("refusal: %v", err)
	if err == nil || !strings.Contains(err.Error(), "column name") {
		t.Errorf("got %v, want the refusal of column name, which the declaration lacks", err)
	}
	st, err := tableOf(t, db, "orders")
	if err != nil {
		t.Fatal(err)
	}
	checkDeclared(t, st)
}

// TestCreateDeclaredRefusals checks what a maxwell-json pipeline with
// schema.create: missing refuses when some entries declare their columns:
// an entry for one table that declares none, at start; a pattern entry
// that declares none, at its table's first change; a column a change
// carries beyond the declaration, under add-columns (no type to add it
// with). Each names the entry or the column and the three ways out.
func TestCreateDeclaredRefusals(t *testing.T) {
	insert := maxwellLine("customers", "insert", `{"id":1,"email":"a@x.org"}`, "")
	cases := []struct {
		name   string
		tables []config.Table
		line   string
		evolve bool
		atNew  bool
		want   []string
	}{
		{"an entry without columns, at start", []config.Table{
			{Source: "inventory.suppliers", PrimaryKey: []string{"id"}, Columns: declaredColumns()},
			{Source: "inventory.customers", PrimaryKey: []string{"id"}},
		}, insert, false, true, []string{
			"tables[1] (inventory.customers): the target table customers does not exist, and schema.create: missing cannot create it: maxwell-json records carry no column types, and its tables entry declares no columns",
			"declare its columns in the tables entry for inventory.customers", "txsink schema", "value.converter.schemas.enable=true", "canal-json", "create the table yourself"}},
		{"a pattern entry without columns, at its first change", []config.Table{
			{Source: "inventory.suppliers", PrimaryKey: []string{"id"}, Columns: declaredColumns()},
			{Source: "inventory.*", PrimaryKey: []string{"id"}},
		}, insert, false, false, []string{
			"changes.jsonl:1", "the target table customers does not exist, and schema.create: missing cannot create it: the record carries no column types",
			"declare its columns in the tables entry for inventory.*", "txsink schema", "value.converter.schemas.enable=true", "create the table yourself"}},
		{"a column beyond the declaration", []config.Table{
			{Source: "inventory.*", PrimaryKey: []string{"id"}, Columns: declaredColumns()},
		}, maxwellLine("customers", "insert", `{"id":1,"email":"a@x.org","extra":5}`, ""), true, false, []string{
			"changes.jsonl:1", "the change carries column extra, which the target table customers lacks, and schema.evolve: add-columns cannot add it: the record carries no column types"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := testdb.Open(t, "sqlite")
			cfg := creatingPipeline(t, db, "maxwell-json", nil, []string{tc.line})
			cfg.Tables = tc.tables
			if tc.evolve {
				cfg.Schema.Evolve = []string{config.SchemaEvolveAddColumns}
			}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			refused(t, cfg, tc.atNew, tc.want)
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
