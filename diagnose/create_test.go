package diagnose_test

import (
	"testing"

	"github.com/txsink/txsink/diagnose"
	"github.com/txsink/txsink/internal/testdb"
)

const canalInsert = `{"data":[{"id":"1","name":"a","price":"1.50"}],"old":null,"database":"shop","table":"t","type":"INSERT","isDdl":false,` +
	`"pkNames":["id"],"mysqlType":{"id":"bigint(20)","name":"varchar(10)","price":"decimal(6,2)"}}`

// createCases are the findings of check under schema.create: missing:
// the exact statement a run would create a missing table with, and the
// refusals, each said once; nothing is written.
var createCases = []tcase{
	{
		name:    "canal declares the table",
		format:  "canal-json",
		top:     "schema: {create: missing}\n",
		tables:  "  - source: shop.*\n",
		records: []string{canalInsert},
		want: []want{
			{sev: diagnose.Info, check: "schema", dialects: []string{"mysql"}, contains: []string{"shop.t", "txsink run creates it",
				"CREATE TABLE IF NOT EXISTS `t` (`id` BIGINT NOT NULL, `name` VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, `price` DECIMAL(6,2), PRIMARY KEY (`id`)) ENGINE=InnoDB"}},
			{sev: diagnose.Info, check: "schema", dialects: []string{"postgres"}, contains: []string{"shop.t", "txsink run creates it",
				`CREATE TABLE IF NOT EXISTS "t" ("id" bigint NOT NULL, "name" varchar(10), "price" numeric(6,2), PRIMARY KEY ("id"))`}},
			{sev: diagnose.Info, check: "schema", dialects: []string{"sqlite"}, contains: []string{"shop.t", "txsink run creates it",
				`CREATE TABLE IF NOT EXISTS "t" ("id" INTEGER NOT NULL, "name" TEXT, "price" DECIMAL(6,2), PRIMARY KEY ("id"))`}},
		},
	},
	{
		name:   "a column the source added",
		format: "canal-json",
		schema: func(string) []string {
			return []string{"CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(10))"}
		},
		top:     "schema: {evolve: add-columns}\n",
		tables:  "  - source: shop.t\n",
		records: []string{canalInsert},
		want: []want{{sev: diagnose.Info, check: "schema", contains: []string{"p0.jsonl:1", "column price", "txsink run adds it, NULL-able",
			"decimal(6,2)", "schema.evolve: add-columns"}}},
	},
	{
		name:    "debezium without the envelope",
		format:  "debezium-json",
		top:     "schema: {create: missing}\n",
		tables:  "  - source: shop.t\n    primary-key: [id]\n",
		records: []string{`{"before":null,"after":{"id":1},"source":{"db":"shop","table":"t"},"op":"c"}`},
		want: []want{{sev: diagnose.Error, check: "schema", contains: []string{"p0.jsonl:1", "the record carries no column types",
			"value.converter.schemas.enable=true"}}},
	},
	{
		name:   "no sampled change reaches a missing table",
		format: "canal-json",
		top:    "schema: {create: missing}\n",
		tables: "  - source: shop.t\n",
		want:   []want{{sev: diagnose.Info, check: "schema", contains: []string{"shop.t", "no sampled change reaches it"}}},
	},
	{
		name:    "maxwell carries no types",
		format:  "maxwell-json",
		top:     "schema: {create: missing}\n",
		tables:  "  - source: shop.*\n    primary-key: [id]\n",
		records: []string{`{"database":"shop","table":"t","type":"insert","ts":1,"data":{"id":1}}`},
		want:    []want{{sev: diagnose.Error, check: "schema", contains: []string{"maxwell-json records: they carry no column types", "canal-json"}}},
	},
	{
		name:   "maxwell with declared columns, no change sampled",
		format: "maxwell-json",
		top:    "schema: {create: missing}\n",
		tables: "  - source: shop.t\n    primary-key: [id]\n    columns: [{name: id, type: bigint}, {name: name, type: varchar(10), null: false}]\n",
		want: []want{{sev: diagnose.Info, check: "schema", contains: []string{"shop.t", "txsink run creates it", "from the columns its tables entry declares"}},
			{sev: diagnose.Info, check: "schema", dialects: []string{"sqlite"}, contains: []string{
				`CREATE TABLE IF NOT EXISTS "t" ("id" INTEGER NOT NULL, "name" TEXT NOT NULL, PRIMARY KEY ("id"))`}}},
	},
	{
		name:   "a declared default the column cannot hold",
		format: "maxwell-json",
		top:    "schema: {create: missing}\n",
		tables: "  - source: shop.t\n    primary-key: [id]\n    columns: [{name: id, type: bigint}, {name: n, type: tinyint, default: 300}]\n",
		want: []want{{sev: diagnose.Error, check: "schema", contains: []string{"shop.t", "cannot create the missing target table", "column n", "its default", "300",
			"correct the column in the columns of tables entry shop.t, or create the table yourself"}}},
	},
	{
		name:   "maxwell with an entry that declares no columns",
		format: "maxwell-json",
		top:    "schema: {create: missing}\n",
		tables: "  - source: shop.u\n    primary-key: [id]\n    columns: [{name: id, type: bigint}]\n  - source: shop.t\n    primary-key: [id]\n",
		want: []want{{sev: diagnose.Info, check: "schema", contains: []string{"shop.u", "txsink run creates it"}},
			{sev: diagnose.Error, check: "schema", contains: []string{"shop.t", "txsink run refuses to start", "maxwell-json records carry no column types, and its tables entry declares no columns",
				"declare its columns in the tables entry for shop.t", "txsink schema", "create the table yourself"}}},
	},
}

// TestCreateFindings runs createCases on every server from an empty
// database, and checks that check created nothing.
func TestCreateFindings(t *testing.T) {
	for _, dialect := range testdb.Dialects {
		t.Run(dialect, func(t *testing.T) {
			for _, tc := range createCases {
				t.Run(tc.name, func(t *testing.T) {
					db := testdb.Open(t, dialect)
					if dialect == "sqlite" {
						db.Exec(t, "PRAGMA user_version = 1") // an empty database, not a missing file
					}
					if tc.schema != nil {
						db.Exec(t, tc.schema(dialect)...)
					}
					rep := runCase(t, db, tc)
					checkFindings(t, dialect, rep, tc.want)
					if tc.schema != nil {
						return
					}
					var n int
					q := map[string]string{
						"mysql":    "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 't'",
						"postgres": "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 't'",
						"sqlite":   "SELECT COUNT(*) FROM sqlite_schema WHERE name = 't'",
					}[dialect]
					if err := db.SQL.QueryRow(q).Scan(&n); err != nil || n != 0 {
						t.Errorf("check created the table (%d, %v)", n, err)
					}
				})
			}
		})
	}
}
