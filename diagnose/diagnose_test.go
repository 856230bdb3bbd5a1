package diagnose_test

import (
	"context"
	"github.com/txsink/txsink/sink"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/diagnose"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/sink/sqlsink"
)

// want is a finding a case must produce: its severity, its check, and
// text its table label, message and fix hold between them.
type want struct {
	sev      diagnose.Severity
	check    string
	contains []string
	// dialects limits the want to some dialects (nil: all).
	dialects []string
}

// tcase is one crafted target and sample.
type tcase struct {
	name     string
	dialects []string // nil: every dialect
	// schema returns the statements that create the case's tables.
	schema func(dialect string) []string
	// tables is the YAML list under "tables:".
	tables string
	// top is more top-level YAML ("skip-unknown-tables: true\n").
	top string
	// sink is the YAML under "sink:" (default an interval of 1s).
	sink string
	// format is source.format (default txsink-json).
	format string
	// urlParams are appended to the target URL's query.
	urlParams map[string]string
	// records are the lines of the one source file.
	records []string
	// paths is source.paths (default [p0.jsonl], the file of records).
	paths []string
	// setup runs after the schema, with the database.
	setup func(t *testing.T, db *testdb.DB)
	// want lists the findings the case must produce; every finding must
	// match one of them (a clean case wants none).
	want []want
}

// dt returns a date-time type with digits fractional-second digits.
func dt(dialect string, digits string) string {
	if dialect == "postgres" {
		return "TIMESTAMP(" + digits + ")"
	}
	return "DATETIME(" + digits + ")"
}

func plainTable(d string) []string {
	return []string{`CREATE TABLE t (
		id BIGINT NOT NULL PRIMARY KEY,
		name VARCHAR(10) NOT NULL,
		amount DECIMAL(6,2) NULL,
		at ` + dt(d, "3") + ` NULL)`}
}

var cases = []tcase{
	{
		name:   "clean",
		schema: plainTable,
		tables: "  - source: shop.t\n",
		records: []string{
			`{"op":"+I","table":"shop.t","row":{"id":1,"name":"ééééééééé","amount":"1.50","at":"2024-01-02 03:04:05.123"}}`,
			`{"op":"-U","table":"shop.t","row":{"id":1,"name":"ééééééééé","amount":"1.50","at":null}}`,
			`{"op":"+U","table":"shop.t","row":{"id":1,"name":"b","amount":"-9999.99","at":null},"before":{"id":1}}`,
			`{"op":"-D","table":"shop.t","row":{"id":1}}`,
		},
	},
	{
		name:   "configured key differs from the target's",
		schema: plainTable,
		tables: "  - source: shop.t\n    primary-key: [name]\n",
		want:   []want{{sev: diagnose.Error, check: "key", contains: []string{"shop.t", "configured primary-key [name]", "PRIMARY KEY [id]"}}},
	},
	{
		name: "target without a primary key",
		schema: func(string) []string {
			return []string{"CREATE TABLE t (id BIGINT NOT NULL, name VARCHAR(10) NULL)"}
		},
		tables: "  - source: shop.t\n",
		want:   []want{{sev: diagnose.Error, check: "key", contains: []string{"no PRIMARY KEY", "append-only"}}},
	},
	{
		name: "version and soft-delete columns the table cannot use",
		schema: func(d string) []string {
			return append(plainTable(d), "CREATE TABLE u (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(10) NULL)")
		},
		tables: "  - source: shop.t\n    version-column: name\n  - source: shop.u\n    delete: soft:gone\n",
		want: []want{
			{sev: diagnose.Error, check: "key", contains: []string{"shop.t", "version-column name is of type string", "integer, decimal, date or timestamp"}},
			{sev: diagnose.Error, check: "key", contains: []string{"shop.u", "delete: soft names column gone, which the table does not have"}},
		},
	},
	{
		name:   "a sampled delete without its version",
		schema: plainTable,
		tables: "  - source: shop.t\n    version-column: amount\n    delete: soft:at\n",
		records: []string{
			`{"op":"+I","table":"shop.t","row":{"id":1,"name":"a","amount":"1.50"}}`,
			`{"op":"-D","table":"shop.t","row":{"id":1,"amount":"1.50"}}`,
			`{"op":"-D","table":"shop.t","row":{"id":2}}`,
		},
		want: []want{{sev: diagnose.Error, check: "key", contains: []string{"p0.jsonl:3", "lacks version column amount"}}},
	},
	{
		name:   "missing target table",
		schema: plainTable,
		tables: "  - source: shop.t\n  - source: shop.refunds\n",
		want:   []want{{sev: diagnose.Error, check: "table", contains: []string{"shop.refunds", "refunds", "does not exist", "create it (or set schema.create: missing to have txsink create it from the changelog's declaration)"}}},
	},
	{
		name:   "sampled changes lack the key",
		schema: plainTable,
		tables: "  - source: shop.t\n",
		records: []string{
			`{"op":"+I","table":"shop.t","row":{"id":1,"name":"a"}}`,
			`{"op":"+I","table":"shop.t","row":{"name":"b"}}`,
			`{"op":"-D","table":"shop.t","row":{"name":"b"}}`,
			`{"op":"+I","table":"shop.t","row":{"name":"c"}}`,
		},
		want: []want{
			{sev: diagnose.Error, check: "key", contains: []string{"p0.jsonl:2", "after image of a +I change lacks key column id", "2 sampled changes"}},
			{sev: diagnose.Error, check: "key", contains: []string{"p0.jsonl:3", "before image of a -D change lacks key column id"}},
		},
	},
	{
		name:   "the message's own primary key differs",
		schema: plainTable,
		tables: "  - source: shop.t\n",
		format: "canal-json",
		records: []string{
			// Column names compare without regard to case, as the target's do.
			`{"data":[{"id":"1","name":"a"}],"database":"shop","table":"t","type":"INSERT","isDdl":false,"pkNames":["ID"]}`,
			`{"data":[{"id":"2","name":"b"}],"database":"shop","table":"t","type":"INSERT","isDdl":false,"pkNames":["name"]}`,
			`{"data":[{"id":"3","name":"c"}],"database":"shop","table":"t","type":"INSERT","isDdl":false,"pkNames":["name"]}`,
			`{"data":[{"id":"4","name":"d"}],"database":"shop","table":"t","type":"INSERT","isDdl":false,"pkNames":["id","name"]}`,
		},
		want: []want{
			{sev: diagnose.Error, check: "key", contains: []string{"p0.jsonl:2", "source's primary key [name]", "[id]", "rows the source keeps apart"}},
			{sev: diagnose.Error, check: "key", contains: []string{"p0.jsonl:4", "source's primary key [id, name]", "[id]", "rows the source keeps apart"}},
		},
	},
	{
		name: "the message's own primary key is narrower",
		schema: func(string) []string {
			return []string{"CREATE TABLE t (id BIGINT NOT NULL, region VARCHAR(8) NOT NULL, PRIMARY KEY (id, region))"}
		},
		tables: "  - source: shop.t\n",
		format: "maxwell-json",
		records: []string{
			`{"database":"shop","table":"t","type":"insert","data":{"id":1,"region":"eu"},"primary_key_columns":["id"]}`,
			`{"database":"shop","table":"t","type":"insert","data":{"id":2,"region":"eu"},"primary_key_columns":["id"]}`,
			`{"database":"shop","table":"t","type":"insert","data":{"id":3,"region":"eu"}}`,
		},
		want: []want{
			{sev: diagnose.Warning, check: "key", contains: []string{"p0.jsonl:1", "source's primary key [id]", "[id, region]", "before image"}},
			// The test database's default collation is utf8mb4_general_ci.
			{sev: diagnose.Info, check: "collation", dialects: []string{"mysql"}, contains: []string{"key column region"}},
		},
	},
	{
		name: "sampled values that do not fit",
		schema: func(d string) []string {
			return []string{`CREATE TABLE t (
				id BIGINT NOT NULL PRIMARY KEY,
				name VARCHAR(3) NOT NULL,
				amount DECIMAL(4,2) NULL,
				at ` + dt(d, "0") + ` NULL)`}
		},
		tables: "  - source: shop.t\n",
		records: []string{
			// Three characters in six bytes: lengths count characters.
			`{"op":"+I","table":"shop.t","row":{"id":1,"name":"ééé","amount":"12.34","at":"2024-01-01 00:00:00"}}`,
			`{"op":"+I","table":"shop.t","row":{"id":2,"name":"abcd"}}`,
			`{"op":"+U","table":"shop.t","row":{"id":3,"name":"abcde"}}`,
			`{"op":"+I","table":"shop.t","row":{"id":4,"name":"a","amount":"123.4"}}`,
			`{"op":"+I","table":"shop.t","row":{"id":5,"name":"a","at":"2024-01-01 00:00:00.5"}}`,
			`{"op":"+I","table":"shop.t","row":{"id":6,"name":null}}`,
			`{"op":"+I","table":"shop.t","row":{"id":7,"name":"a","color":"red"}}`,
			`{"op":"+I","table":"shop.t","row":{"id":"x","name":"a"}}`,
		},
		want: []want{
			// SQLite does not enforce VARCHAR lengths, and neither does txsink there.
			{sev: diagnose.Error, check: "value", dialects: []string{"mysql", "postgres"}, contains: []string{"p0.jsonl:2", "column name", `"abcd"`, "2 sampled changes", "at least 5 characters"}},
			{sev: diagnose.Error, check: "value", contains: []string{"p0.jsonl:4", "column amount", "123.4", "DECIMAL precision"}},
			{sev: diagnose.Error, check: "value", contains: []string{"p0.jsonl:5", "column at", "fractional-second digits"}},
			{sev: diagnose.Error, check: "value", contains: []string{"p0.jsonl:6", "column name", "NOT NULL", "NULL-able"}},
			{sev: diagnose.Error, check: "value", contains: []string{"p0.jsonl:7", "column color", "does not have", "add column color"}},
			{sev: diagnose.Error, check: "value", contains: []string{"p0.jsonl:8", "column id", `"x"`}},
		},
	},
	{
		name:   "dead-letter makes refusals warnings",
		schema: plainTable,
		tables: "  - source: shop.t\n",
		top:    "bad-input: dead-letter\n",
		records: []string{
			`{"op":"+I","table":"shop.t","row":{"id":1,"name":null}}`,
		},
		want: []want{{sev: diagnose.Warning, check: "value", contains: []string{"p0.jsonl:1", "NOT NULL"}}},
	},
	{
		name: "unique secondary key",
		schema: func(string) []string {
			return []string{
				"CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY, email VARCHAR(50) NOT NULL, a INT NULL, b INT NULL)",
				"CREATE UNIQUE INDEX uq_t_email ON t (email)",
				"CREATE UNIQUE INDEX uq_t_ab ON t (a, b)",
				"CREATE INDEX ix_t_a ON t (a)",
			}
		},
		tables: "  - source: shop.t\n",
		want: []want{
			{sev: diagnose.Warning, check: "unique", contains: []string{"uq_t_email (email)", "is NOT NULL", "swapping email", "deletes the flush's rows that hold them"}},
			{sev: diagnose.Info, check: "unique", contains: []string{"uq_t_ab (a, b)", "to NULL"}},
		},
	},
	{
		name:     "unique index on an expression",
		dialects: []string{"postgres", "sqlite"},
		schema: func(string) []string {
			return []string{"CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY, email VARCHAR(50) NOT NULL)", "CREATE UNIQUE INDEX uq_t_lower ON t (lower(email))"}
		},
		tables: "  - source: shop.t\n",
		want:   []want{{sev: diagnose.Warning, check: "unique", contains: []string{"uq_t_lower", "which txsink does not read", "duplicate-key error"}}},
	},
	{
		name:     "deferred unique constraint",
		dialects: []string{"postgres"},
		schema: func(string) []string {
			return []string{"CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY, email VARCHAR(50) NOT NULL, CONSTRAINT uq_email UNIQUE (email) DEFERRABLE INITIALLY DEFERRED)"}
		},
		tables: "  - source: shop.t\n",
	},
	{
		name: "trigger",
		schema: func(d string) []string {
			stmts := []string{
				"CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(10) NULL)",
				"CREATE TABLE audit (id BIGINT NULL)",
			}
			switch d {
			case "mysql":
				stmts = append(stmts, "CREATE TRIGGER t_audit AFTER INSERT ON t FOR EACH ROW INSERT INTO audit VALUES (NEW.id)")
			case "postgres":
				stmts = append(stmts,
					"CREATE FUNCTION t_audit_fn() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO audit VALUES (NEW.id); RETURN NEW; END $$",
					"CREATE TRIGGER t_audit AFTER INSERT ON t FOR EACH ROW EXECUTE FUNCTION t_audit_fn()")
			case "sqlite":
				stmts = append(stmts, "CREATE TRIGGER t_audit AFTER INSERT ON t BEGIN INSERT INTO audit VALUES (NEW.id); END")
			}
			return stmts
		},
		tables: "  - source: shop.t\n",
		want:   []want{{sev: diagnose.Warning, check: "trigger", contains: []string{"trigger t_audit (AFTER INSERT)", "exactly-once covers them"}}},
	},
	{
		name:     "trigger writing outside the target database",
		dialects: []string{"mysql", "postgres"},
		schema: func(d string) []string {
			stmts := []string{"CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY)"}
			if d == "mysql" {
				return append(stmts, "CREATE TRIGGER t_out BEFORE UPDATE ON t FOR EACH ROW INSERT INTO elsewhere.audit VALUES (NEW.id)")
			}
			return append(stmts,
				"CREATE FUNCTION t_out_fn() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO elsewhere.audit VALUES (NEW.id); RETURN NEW; END $$",
				"CREATE TRIGGER t_out BEFORE UPDATE ON t FOR EACH ROW EXECUTE FUNCTION t_out_fn()")
		},
		tables: "  - source: shop.t\n",
		want:   []want{{sev: diagnose.Warning, check: "trigger", contains: []string{"t_out (BEFORE UPDATE)", "outside the target database (writes to elsewhere.*)", "not cover"}}},
	},
	{
		name: "foreign keys",
		schema: func(string) []string {
			return []string{
				"CREATE TABLE p (id BIGINT NOT NULL PRIMARY KEY)",
				"CREATE TABLE c (id BIGINT NOT NULL PRIMARY KEY, p_id BIGINT NULL, CONSTRAINT fk_c_p FOREIGN KEY (p_id) REFERENCES p (id) ON DELETE CASCADE)",
			}
		},
		tables: "  - source: shop.p\n  - source: shop.c\n",
		want: []want{
			{sev: diagnose.Info, check: "foreign-key", contains: []string{"shop.p", "(p_id) references this table ON DELETE CASCADE", "exactly-once covers it"}},
			{sev: diagnose.Info, check: "foreign-key", contains: []string{"target: foreign keys among the tables txsink writes order each flush's statements", "c, write ", "p, write ", "c, delete from ", "ON DELETE CASCADE"}},
		},
	},
	{
		name: "foreign keys in a cycle",
		schema: func(d string) []string {
			if d == "sqlite" {
				return []string{
					"CREATE TABLE a (id BIGINT NOT NULL PRIMARY KEY, b_id BIGINT NULL, CONSTRAINT fk_a_b FOREIGN KEY (b_id) REFERENCES b (id))",
					"CREATE TABLE b (id BIGINT NOT NULL PRIMARY KEY, a_id BIGINT NULL, CONSTRAINT fk_b_a FOREIGN KEY (a_id) REFERENCES a (id))",
				}
			}
			return []string{
				"CREATE TABLE a (id BIGINT NOT NULL PRIMARY KEY, b_id BIGINT NULL)",
				"CREATE TABLE b (id BIGINT NOT NULL PRIMARY KEY, a_id BIGINT NULL, CONSTRAINT fk_b_a FOREIGN KEY (a_id) REFERENCES a (id))",
				"ALTER TABLE a ADD CONSTRAINT fk_a_b FOREIGN KEY (b_id) REFERENCES b (id)",
			}
		},
		tables: "  - source: shop.a\n  - source: shop.b\n",
		want: []want{
			{sev: diagnose.Warning, check: "foreign-key", contains: []string{"form a cycle among tables txsink writes", "(b_id)", "(a_id)", "rather than switch foreign-key checks off"}},
			{sev: diagnose.Warning, check: "foreign-key", contains: []string{"declare them DEFERRABLE"}, dialects: []string{"postgres"}},
		},
	},
	{
		name: "foreign key of a table to itself",
		schema: func(string) []string {
			return []string{"CREATE TABLE tree (id BIGINT NOT NULL PRIMARY KEY, parent BIGINT NULL, CONSTRAINT fk_tree FOREIGN KEY (parent) REFERENCES tree (id))"}
		},
		tables: "  - source: shop.tree\n",
		want: []want{
			{sev: diagnose.Info, check: "foreign-key", contains: []string{"references the table itself", "a statement per level"}},
			{sev: diagnose.Info, check: "foreign-key", contains: []string{"target: foreign keys among the tables txsink writes order", "write ", "tree, delete from "}},
		},
	},
	{
		name: "foreign key to a table the pipeline does not write",
		schema: func(string) []string {
			return []string{
				"CREATE TABLE p (id BIGINT NOT NULL PRIMARY KEY)",
				"CREATE TABLE c (id BIGINT NOT NULL PRIMARY KEY, p_id BIGINT NULL, CONSTRAINT fk_c_p FOREIGN KEY (p_id) REFERENCES p (id))",
			}
		},
		tables: "  - source: shop.c\n",
		want:   []want{{sev: diagnose.Info, check: "foreign-key", contains: []string{"shop.c", "(p_id) references", "which this pipeline does not write"}}},
	},
	{
		name:     "deferred foreign key",
		dialects: []string{"postgres", "sqlite"},
		schema: func(string) []string {
			return []string{
				"CREATE TABLE p (id BIGINT NOT NULL PRIMARY KEY)",
				"CREATE TABLE c (id BIGINT NOT NULL PRIMARY KEY, p_id BIGINT NULL, CONSTRAINT fk_c_p FOREIGN KEY (p_id) REFERENCES p (id) DEFERRABLE INITIALLY DEFERRED)",
			}
		},
		tables: "  - source: shop.p\n  - source: shop.c\n",
	},
	{
		name: "case-insensitive key",
		schema: func(d string) []string {
			switch d {
			case "mysql":
				return []string{"CREATE TABLE t (code VARCHAR(20) COLLATE utf8mb4_general_ci NOT NULL PRIMARY KEY)"}
			case "postgres":
				return []string{
					"CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)",
					"CREATE TABLE t (code VARCHAR(20) COLLATE ci NOT NULL PRIMARY KEY)",
				}
			}
			return []string{"CREATE TABLE t (code TEXT COLLATE NOCASE NOT NULL PRIMARY KEY)"}
		},
		tables: "  - source: shop.t\n",
		want: []want{
			{sev: diagnose.Info, check: "collation", dialects: []string{"mysql", "sqlite"}, contains: []string{"key column code compares without regard to case", "txsink folds case"}},
			// A nondeterministic collation is refused as the run refuses it.
			{sev: diagnose.Error, check: "key", dialects: []string{"postgres"}, contains: []string{"key column code compares by collation ci", "cannot reproduce", "nondeterministic"}},
		},
	},
	{
		name:     "case-sensitive key",
		dialects: []string{"mysql"},
		schema: func(string) []string {
			return []string{"CREATE TABLE t (code VARCHAR(20) COLLATE utf8mb4_bin NOT NULL PRIMARY KEY)"}
		},
		tables: "  - source: shop.t\n",
	},
	{
		name: "rows but no progress",
		schema: func(d string) []string {
			return append(plainTable(d), "INSERT INTO t (id, name) VALUES (1, 'x')")
		},
		tables: "  - source: shop.t\n",
		want:   []want{{sev: diagnose.Info, check: "writer", contains: []string{"target: table ", " holds rows", "pipeline diag has committed nothing", "version column"}}},
	},
	{
		name: "rows with progress, and another pipeline",
		schema: func(d string) []string {
			return append(plainTable(d), "INSERT INTO t (id, name) VALUES (1, 'x')")
		},
		setup: func(t *testing.T, db *testdb.DB) {
			ctx := context.Background()
			tg := progressTable(t, db)
			for _, p := range []string{"diag", "other"} {
				if _, err := tg.Claim(ctx, p, []string{"p0.jsonl"}); err != nil {
					t.Fatal(err)
				}
			}
			db.Exec(t, "UPDATE txsink_progress SET position = 10 WHERE pipeline = 'diag'")
			// A pipeline that claimed partitions but committed nothing
			// is not named: it wrote nothing here.
			if _, err := tg.Claim(ctx, "idle", []string{"p0.jsonl"}); err != nil {
				t.Fatal(err)
			}
			db.Exec(t, "UPDATE txsink_progress SET position = 5 WHERE pipeline = 'other'")
		},
		tables: "  - source: shop.t\n",
		// A file as long as the progress at least: a run refuses to
		// resume past a file's end, and check says so.
		records: []string{`{"op":"+I","table":"shop.t","row":{"id":1,"name":"x"}}`},
		want:    []want{{sev: diagnose.Info, check: "writer", contains: []string{"other pipelines have committed into this target too (other);"}}},
	},
	{
		name:      "server timeouts shorter than the interval",
		dialects:  []string{"mysql", "postgres"},
		schema:    plainTable,
		tables:    "  - source: shop.t\n",
		sink:      "  buffer-flush.interval: 5s\n  transaction.multi-table.enabled: true\n",
		urlParams: map[string]string{"innodb_lock_wait_timeout": "1", "wait_timeout": "2", "lock_timeout": "1000", "statement_timeout": "2000", "idle_in_transaction_session_timeout": "3000"},
		want: []want{
			{sev: diagnose.Warning, check: "timeout", dialects: []string{"mysql"}, contains: []string{"innodb_lock_wait_timeout is 1s", "buffer-flush.interval (5s)"}},
			{sev: diagnose.Warning, check: "timeout", dialects: []string{"mysql"}, contains: []string{"wait_timeout is 2s", "closes txsink's connection"}},
			{sev: diagnose.Warning, check: "timeout", dialects: []string{"postgres"}, contains: []string{"lock_timeout is 1s"}},
			{sev: diagnose.Warning, check: "timeout", dialects: []string{"postgres"}, contains: []string{"statement_timeout is 2s"}},
			{sev: diagnose.Warning, check: "timeout", dialects: []string{"postgres"}, contains: []string{"idle_in_transaction_session_timeout is 3s"}},
		},
	},
	{
		name:      "lock timeouts do not matter in plain mode",
		dialects:  []string{"mysql", "postgres"},
		schema:    plainTable,
		tables:    "  - source: shop.t\n",
		sink:      "  buffer-flush.interval: 5s\n",
		urlParams: map[string]string{"innodb_lock_wait_timeout": "1", "lock_timeout": "1000", "statement_timeout": "2000"},
	},
	{
		name:    "unknown table in the sample",
		schema:  plainTable,
		tables:  "  - source: shop.t\n",
		records: []string{`{"op":"+I","table":"shop.zzz","row":{"id":1}}`},
		want:    []want{{sev: diagnose.Error, check: "table", contains: []string{"shop.zzz", "p0.jsonl:1", "match no tables entry", "skip-unknown-tables"}}},
	},
	{
		name:    "skipped unknown table",
		schema:  plainTable,
		tables:  "  - source: shop.t\n",
		top:     "skip-unknown-tables: true\n",
		records: []string{`{"op":"+I","table":"shop.zzz","row":{"id":1}}`},
		want:    []want{{sev: diagnose.Info, check: "table", contains: []string{"shop.zzz", "skips them"}}},
	},
	{
		name: "update for an append-only table",
		schema: func(string) []string {
			return []string{"CREATE TABLE events (id BIGINT NOT NULL, what VARCHAR(10) NULL)"}
		},
		tables: "  - source: shop.events\n    append-only: true\n",
		records: []string{
			`{"op":"+I","table":"shop.events","row":{"id":1,"what":"a"}}`,
			`{"op":"+U","table":"shop.events","row":{"id":1,"what":"b"}}`,
		},
		want: []want{{sev: diagnose.Error, check: "key", contains: []string{"p0.jsonl:2", "+U change reached an append-only table"}}},
	},
	{
		name:   "wildcard entry resolved by the sample",
		schema: plainTable,
		tables: "  - source: shop.*\n",
		records: []string{
			`{"op":"+I","table":"shop.t","row":{"id":1,"name":null}}`,
		},
		want: []want{{sev: diagnose.Error, check: "value", contains: []string{"shop.t ->", "p0.jsonl:1", "NOT NULL"}}},
	},
	{
		name:   "undecodable record",
		schema: plainTable,
		tables: "  - source: shop.t\n",
		records: []string{
			`{"op":"+I","table":"shop.t","row":{"id":1,"name":"a"}}`,
			`{"op":"+I","table":`,
		},
		want: []want{{sev: diagnose.Error, check: "source", contains: []string{"p0.jsonl:2", "cannot be decoded as txsink-json"}}},
	},
	{
		name:   "NOT NULL column the sample never sends",
		schema: notNullTable,
		tables: "  - source: shop.t\n",
		records: []string{
			`{"op":"+I","table":"shop.t","row":{"id":1,"name":"a"}}`,
			`{"op":"+U","table":"shop.t","row":{"id":1,"name":"b"}}`,
			`{"op":"-D","table":"shop.t","row":{"id":1}}`,
		},
		// status has a default, seq is filled by the target, total is
		// generated, id is the key: only note is never sent.
		want: []want{{sev: diagnose.Error, check: "column", contains: []string{"shop.t ->", "column note is NOT NULL without a default",
			"none of the 2 sampled changes that write a row", "1364", "23502", "give column note a DEFAULT"}}},
	},
	{
		name:   "NOT NULL column the Debezium schema lacks",
		schema: notNullTable,
		tables: "  - source: shop.t\n",
		format: "debezium-json",
		// Only a delete is sampled: its schema says which columns every
		// image of the table has.
		records: []string{debeziumDelete},
		want: []want{{sev: diagnose.Error, check: "column", contains: []string{"column note is NOT NULL without a default",
			"the schema the sampled messages declare for the table does not have it"}}},
	},
	{
		name:   "a NOT NULL column every image sends",
		schema: notNullTable,
		tables: "  - source: shop.t\n",
		records: []string{
			`{"op":"+I","table":"shop.t","row":{"id":1,"name":"a","note":"n"}}`,
			`{"op":"+U","table":"shop.t","row":{"id":1,"name":"b"}}`,
		},
	},
	{
		// Run reads an update's before image for its key alone (README,
		// "Values"): check takes what run takes.
		name:   "a column named twice outside the key of an update's before image",
		schema: plainTable,
		tables: "  - source: shop.t\n",
		format: "debezium-json",
		records: []string{
			`{"before":{"id":1,"name":"a","name":"b"},"after":{"id":1,"name":"c"},"source":{"db":"shop","table":"t"},"op":"u"}`,
		},
	},
	{
		name:   "a column named twice in a delete's before image",
		schema: plainTable,
		tables: "  - source: shop.t\n",
		format: "debezium-json",
		records: []string{
			`{"before":{"id":1,"name":"a","name":"b"},"after":null,"source":{"db":"shop","table":"t"},"op":"d"}`,
		},
		want: []want{{sev: diagnose.Error, check: "source", contains: []string{"p0.jsonl:1", `duplicate column "name"`}}},
	},
	{
		name:   "missing source file",
		schema: plainTable,
		tables: "  - source: shop.t\n",
		paths:  []string{"p0.jsonl", "day2.jsonl"},
		want:   []want{{sev: diagnose.Error, check: "source", contains: []string{"p0.jsonl: ", "day2.jsonl", "no such file", "txsink run refuses to start"}}},
	},
	{
		name:   "a history table beside the upsert table",
		schema: historyTable("t_hist", true),
		tables: "  - source: shop.t\n  - source: shop.t\n    target: t_hist\n    mode: history\n",
		records: []string{
			`{"op":"+I","table":"shop.t","row":{"id":1,"name":"a","amount":"1.50","at":null}}`,
			`{"op":"-D","table":"shop.t","row":{"id":1}}`,
		},
	},
	{
		name:   "a history table without txsink's columns",
		schema: historyTable("t_hist", false),
		tables: "  - source: shop.t\n  - source: shop.t\n    target: t_hist\n    mode: history\n",
		want: []want{{sev: diagnose.Error, check: "table", contains: []string{"t_hist", "history table", "lacks column __op",
			"lacks column __read_at", "add the columns"}}},
	},
}

// historyTable returns plainTable's statements and those of a history
// table name of its columns, with txsink's five when complete.
func historyTable(name string, complete bool) func(d string) []string {
	return func(d string) []string {
		own := ""
		if complete {
			own = ", __op VARCHAR(1) NOT NULL, __source_partition VARCHAR(255) NOT NULL, __source_offset BIGINT NOT NULL, " +
				"__txn_id VARCHAR(255) NULL, __read_at " + dt(d, "6") + " NOT NULL"
		}
		return append(plainTable(d), `CREATE TABLE `+name+` (id BIGINT NULL, name VARCHAR(10) NULL, amount DECIMAL(6,2) NULL, at `+dt(d, "3")+` NULL`+own+`)`)
	}
}

// progressTable opens db as a run does, which makes its progress table,
// and returns it; it is closed when the test ends.
func progressTable(t *testing.T, db *testdb.DB) *sqlsink.DB {
	t.Helper()
	ctx := context.Background()
	tg, err := sink.Open(ctx, db.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	if err := tg.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	return tg.(*sqlsink.DB)
}

// notNullTable has NOT NULL columns of every kind: a key, one without a
// default (note), one with a default, one the target fills and one it
// computes.
func notNullTable(d string) []string {
	switch d {
	case "mysql":
		return []string{`CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(10) NOT NULL, note VARCHAR(10) NOT NULL,
			status VARCHAR(10) NOT NULL DEFAULT 'new', seq BIGINT NOT NULL AUTO_INCREMENT, total BIGINT AS (id * 2) STORED, KEY (seq))`}
	case "postgres":
		return []string{`CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(10) NOT NULL, note VARCHAR(10) NOT NULL,
			status VARCHAR(10) NOT NULL DEFAULT 'new', seq BIGINT GENERATED BY DEFAULT AS IDENTITY, serial BIGSERIAL,
			total BIGINT GENERATED ALWAYS AS (id * 2) STORED)`}
	}
	return []string{`CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(10) NOT NULL, note VARCHAR(10) NOT NULL,
		status VARCHAR(10) NOT NULL DEFAULT 'new', total BIGINT GENERATED ALWAYS AS (id * 2) STORED)`}
}

// debeziumDelete is a Debezium delete of shop.t in the Connect envelope,
// whose schema gives the table's images the columns id and name.
const debeziumDelete = `{"schema":{"type":"struct","fields":[` +
	`{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},{"type":"string","optional":false,"field":"name"}],"optional":true,"field":"before"},` +
	`{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},{"type":"string","optional":false,"field":"name"}],"optional":true,"field":"after"},` +
	`{"type":"struct","fields":[],"field":"source"},{"type":"string","field":"op"}]},` +
	`"payload":{"before":{"id":1,"name":"a"},"after":null,"source":{"db":"shop","table":"t"},"op":"d","ts_ms":1}}`

// TestFindings runs every case on every dialect it applies to and checks
// that it produces exactly the findings it wants.
func TestFindings(t *testing.T) {
	for _, dialect := range testdb.Dialects {
		t.Run(dialect, func(t *testing.T) {
			for _, tc := range cases {
				if tc.dialects != nil && !slices.Contains(tc.dialects, dialect) {
					continue
				}
				t.Run(tc.name, func(t *testing.T) {
					db := testdb.Open(t, dialect)
					db.Exec(t, tc.schema(dialect)...)
					if tc.setup != nil {
						tc.setup(t, db)
					}
					rep := runCase(t, db, tc)
					checkFindings(t, dialect, rep, tc.want)
				})
			}
		})
	}
}

// checkFindings fails unless every want is met by a finding and every
// finding meets a want.
func checkFindings(t *testing.T, dialect string, rep *diagnose.Report, wants []want) {
	t.Helper()
	used := make([]bool, len(rep.Findings))
	for _, w := range wants {
		if w.dialects != nil && !slices.Contains(w.dialects, dialect) {
			continue
		}
		found := false
		for i, f := range rep.Findings {
			if f.Severity != w.sev || f.Check != w.check {
				continue
			}
			text := f.Table + ": " + f.Message + " Fix: " + f.Fix
			ok := true
			for _, s := range w.contains {
				ok = ok && strings.Contains(text, s)
			}
			if ok {
				found, used[i] = true, true
			}
		}
		if !found {
			t.Errorf("no %s %s finding holding %q; the findings:\n%s", w.sev, w.check, w.contains, render(rep))
		}
	}
	for i, f := range rep.Findings {
		if !used[i] {
			t.Errorf("unexpected finding:\n%s", f)
		}
	}
}

func render(rep *diagnose.Report) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		b.WriteString(f.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// runCase writes the case's config and source file and runs the check.
func runCase(t *testing.T, db *testdb.DB, tc tcase) *diagnose.Report {
	t.Helper()
	dir := t.TempDir()
	var src strings.Builder
	for _, r := range tc.records {
		src.WriteString(r)
		src.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "p0.jsonl"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	url := db.URL
	for k, v := range tc.urlParams {
		if (db.Dialect == "mysql") != strings.Contains(k, "wait_timeout") {
			continue // each server gets its own settings
		}
		sep := "?"
		if strings.Contains(url, "?") {
			sep = "&"
		}
		url += sep + k + "=" + v
	}
	format, sink := tc.format, tc.sink
	if format == "" {
		format = "txsink-json"
	}
	if sink == "" {
		sink = "  buffer-flush.interval: 1s\n"
	}
	paths := tc.paths
	if paths == nil {
		paths = []string{"p0.jsonl"}
	}
	yaml := "name: diag\n" + tc.top +
		"source:\n  type: file\n  paths: [" + strings.Join(paths, ", ") + "]\n  format: " + format + "\n" +
		"target:\n  url: \"" + url + "\"\n" +
		"tables:\n" + tc.tables +
		"sink:\n" + sink
	cfg, err := config.Parse([]byte(yaml), dir)
	if err != nil {
		t.Fatalf("config: %v\n%s", err, yaml)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := diagnose.Run(ctx, cfg, diagnose.Options{Sample: diagnose.DefaultSample, BaseDir: dir})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(tc.records) > 0 && rep.Records != len(tc.records) {
		t.Errorf("sampled %d records, want %d", rep.Records, len(tc.records))
	}
	return rep
}

// TestWritesNothing checks that a check with findings of every kind leaves
// the target as it was: no table created (not even txsink_progress), no
// row written, and for SQLite not a byte of the file changed.
func TestWritesNothing(t *testing.T) {
	for _, dialect := range testdb.Dialects {
		t.Run(dialect, func(t *testing.T) {
			db := testdb.Open(t, dialect)
			db.Exec(t, plainTable(dialect)...)
			db.Exec(t, "CREATE UNIQUE INDEX uq_t_name ON t (name)", "INSERT INTO t (id, name) VALUES (1, 'x')")
			snapshot := func() string {
				t.Helper()
				var b strings.Builder
				var q string
				switch dialect {
				case "mysql":
					q = "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1"
				case "postgres":
					q = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1"
				default:
					q = "SELECT name FROM sqlite_schema ORDER BY 1"
				}
				rows, err := db.SQL.Query(q)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				for rows.Next() {
					var name string
					if err := rows.Scan(&name); err != nil {
						t.Fatal(err)
					}
					b.WriteString(name + " ")
				}
				var n int
				if err := db.SQL.QueryRow("SELECT COUNT(*) FROM t").Scan(&n); err != nil {
					t.Fatal(err)
				}
				b.WriteString("rows " + strconv.Itoa(n))
				if dialect == "sqlite" {
					path := strings.TrimPrefix(db.URL, "sqlite://")
					data, err := os.ReadFile(path)
					if err != nil {
						t.Fatal(err)
					}
					b.WriteString(" file " + string(data))
				}
				return b.String()
			}
			if dialect == "sqlite" {
				// The test's own handle keeps WAL files open; checkpoint so
				// the file is stable before and after.
				db.Exec(t, "PRAGMA wal_checkpoint(TRUNCATE)")
			}
			before := snapshot()
			rep := runCase(t, db, tcase{
				tables: "  - source: shop.t\n",
				records: []string{
					`{"op":"+I","table":"shop.t","row":{"id":2,"name":"y"}}`,
					`{"op":"+I","table":"shop.t","row":{"id":3,"name":null}}`,
				},
			})
			if rep.Count(diagnose.Error) != 1 || len(rep.Of("unique")) != 1 || len(rep.Of("writer")) != 1 {
				t.Errorf("want one error (the NULL), a unique and a writer finding; got:\n%s", render(rep))
			}
			if dialect == "sqlite" {
				db.Exec(t, "PRAGMA wal_checkpoint(TRUNCATE)")
			}
			if after := snapshot(); after != before {
				t.Errorf("the check changed the target")
			}
		})
	}
}
