package config

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/txsink/txsink/source"
)

// This file is the one table of configuration keys, but for the source
// types' own, which each source declares (source.Keyed) and sourcekeys.go
// joins to it. The decoder sets fields through it, the validator checks
// them through it, and Reference and docs/config.md are printed from it: a
// key added here is parsed, checked and documented, and a key missing here
// is rejected as unknown. Its doc is the key's only description: the
// struct fields it sets only name it (TestKeysDocumentedOnce).

// valueType is how a key's YAML value is written.
type valueType uint8

const (
	typeString      valueType = iota
	typeBool                  // true or false
	typeInt                   // whole number
	typeSize                  // bytes, with an optional unit: 16MiB
	typeDuration              // Go duration: 1s, 100ms
	typeMillis                // whole number of milliseconds
	typeStrings               // list of strings, or one string
	typeStringMap             // mapping of string keys to string values
	typeStringLists           // list whose entries are a string or a list of strings
	typeColumns               // list of column mappings (tables[].columns)
)

// String returns the type's name as the reference documentation shows it.
func (t valueType) String() string {
	switch t {
	case typeString:
		return "string"
	case typeBool:
		return "bool"
	case typeInt, typeMillis:
		return "integer"
	case typeSize:
		return "size"
	case typeDuration:
		return "duration"
	case typeStrings:
		return "list of strings"
	case typeStringMap:
		return "map of strings"
	case typeStringLists:
		return "list of lists of strings"
	case typeColumns:
		return "list of columns"
	}
	return fmt.Sprintf("valueType(%d)", t)
}

// keyDef defines one key of one section.
type keyDef struct {
	// name is the key inside its section ("buffer-flush.max-rows").
	name string
	typ  valueType
	// unit is the unit of a number ("bytes", "ms", "rows"), for the docs.
	unit string
	// required keys have no default; the zero value is refused.
	required bool
	// only names the source types a source key belongs to (["kafka"]);
	// nil for keys of every type. A key of another type is refused, and
	// required only binds for its own types. Such keys come from the
	// sources (source.Keyed) and live in Source.Raw.
	only []string
	// path keys name files, made absolute against the config's folder
	// ("-" in a list stays); env keys have ${NAME} expanded.
	path, env bool
	// auto keys also take -1 (typeMillis) or "auto" (typeDuration), stored
	// as MiniSwitchAuto, or "auto" (typeSize), stored as MaxTxnBytesAuto.
	auto bool
	// unlimited keys (typeSize) also take "unlimited", stored as 0.
	unlimited bool
	// aliasOf names the key of the same section that sets the same field in
	// another spelling; setting both is an error.
	aliasOf string
	// want completes "set it to ..." in messages: what a valid value is;
	// wantOf, when set, computes it (from the plug-in names).
	want   string
	wantOf func() string
	// defaultDoc is the documented default when printing Default()'s value
	// would not say it well; "" prints the value.
	defaultDoc string
	// doc is the description in the reference documentation; docOf,
	// when set, computes it.
	doc   string
	docOf func() string
	// field returns a pointer to the field the key sets inside the section
	// struct (*Config, *Source, *Target, *Table or *Sink). For a key of a
	// source (only set) it is a pointer to a copy of its value in
	// Source.Raw, its default when absent; store writes it back.
	field func(section any) any
	store func(section any, p any)
	// value is the Go type a source key's value in Source.Raw must have.
	value reflect.Type
	// check returns what is wrong with the field's value, or "" when it is
	// fine. It runs on every Config, parsed or built in Go. nil: any value
	// of the type is fine.
	check func(field any) string
}

// sectionDef is one mapping of the YAML file.
type sectionDef struct {
	// path is the section's key path: "" for the top level, "tables[]" for
	// the entries of tables.
	path string
	keys []keyDef
	// children are the keys of the section that hold sections of their own.
	children []string
	// intro describes the section in the reference documentation.
	intro string
}

// Plug-in names and keys. Package config imports no source and no format:
// the registries (package source, package format/formats) sit above the
// plug-ins. SourceTypes and SourceDriver default to package source's
// registry, which holds the source types linked into the program (the
// command imports source/sources); each Driver that is a source.Keyed
// declares its keys, which config parses, checks and documents as its
// own. Formats is set by the program that links the formats in (cmd/txsink
// sets it to formats.Names). Left nil, any name passes here, and the
// engine refuses an unknown one when it looks it up.
var (
	// SourceTypes returns the accepted values of source.type.
	SourceTypes = source.Names
	// SourceDriver returns the driver of a source type, whose keys
	// (source.Keyed) and checks (source.Validator) config takes.
	SourceDriver = source.Lookup
	// Formats returns the accepted values of source.format.
	Formats func() []string
)

// known returns names(), or nil when names is nil (any name passes).
func known(names func() []string) []string {
	if names == nil {
		return nil
	}
	return names()
}

// oneOfKnown returns a check that accepts "" and the names names returns
// (any value when names is nil).
func oneOfKnown(what string, names *func() []string) func(any) string {
	return func(p any) string {
		list := known(*names)
		if v := *p.(*string); v != "" && *names != nil && !slices.Contains(list, v) {
			return fmt.Sprintf("unknown %s %q", what, v)
		}
		return ""
	}
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

var topSection = sectionDef{
	path:     "",
	children: []string{"source", "target", "tables", "sink", "schema"},
	intro:    "The top level names the pipeline and holds the sections below.",
	keys: []keyDef{{
		name: "name", typ: typeString, required: true,
		want: "1 to 128 letters, digits, '_', '.' or '-', unique among the pipelines writing to one target",
		doc: "Names the pipeline. The target's progress rows are keyed by it, so two pipelines writing " +
			"to one target need different names, and renaming a pipeline makes it start over.",
		field: func(s any) any { return &s.(*Config).Name },
		check: func(p any) string {
			if v := *p.(*string); v != "" && !namePattern.MatchString(v) {
				return fmt.Sprintf("%q is not a valid name", v)
			}
			return ""
		},
	}, {
		name: "skip-unknown-tables", typ: typeBool,
		want: "true or false",
		doc: "Skip (and count) changes of tables that no `tables` entry matches, instead of stopping " +
			"with an error. Off by default so that a table added upstream is never dropped silently.",
		field: func(s any) any { return &s.(*Config).SkipUnknownTables },
	}, {
		name: "bad-input", typ: typeString,
		want: "one of: " + strings.Join(badInputPolicies, ", "),
		doc: "What a change txsink cannot apply does (a record that cannot be decoded, a value its column " +
			"cannot hold, a missing key, a column or table the target lacks). `fail` (the default) stops the " +
			"pipeline with an error naming the position, table, key and column; nothing past the last commit " +
			"is committed. `dead-letter` quarantines the whole source transaction (in plain mode the record) " +
			"into the target table `txsink_dead_letters` — pipeline, position, the raw record, the reason, the " +
			"time — in the same commit that moves the progress past it, and goes on; `txsink dead-letters` " +
			"lists them (on StarRocks the table is a Primary Key table loaded in the unit's multi-table " +
			"transaction; see README's Into StarRocks). A row the target itself refuses for its own values (text its encoding refuses, such " +
			"as a NUL byte into PostgreSQL text; a CHECK constraint; a NOT NULL column the change leaves " +
			"without a value), or an update image lacking columns of a row the target does not have, is " +
			"quarantined too, with the server's message: txsink starts again from the last " +
			"commit without it. A refusal that depends on other rows (a foreign or unique key), a full disk or " +
			"another condition of the server, and a transient error still stop the pipeline. In transaction " +
			"mode a record that cannot be decoded still stops the pipeline: which transaction it belongs to is " +
			"unknown, and so does a refused row when transactions are joined by `source.transaction-topic`.",
		field: func(s any) any { return &s.(*Config).BadInput },
		check: func(p any) string {
			if v := *p.(*string); v != "" && !slices.Contains(badInputPolicies, v) {
				return fmt.Sprintf("unknown policy %q", v)
			}
			return ""
		},
	}, {
		name: "startup-timeout", typ: typeDuration,
		want: "a duration of 0 or more, such as 60s or 5m",
		doc: "How long `txsink run` waits at start for the target database and the source's servers (Kafka's " +
			"brokers, the `postgres` source's database) to answer. While it waits it logs what it waits for, its address and the last error, and " +
			"`/readyz` answers 503 (`starting`); once the time is up it exits 1 with an error naming the address " +
			"and what to check. Only a server that does not answer is waited for (connection refused, a timeout, " +
			"a name that does not resolve yet): one that answers with an error (a wrong password, an unknown " +
			"database) stops at once. `0` does not wait. `txsink check` never waits.",
		field: func(s any) any { return &s.(*Config).StartupTimeout },
		check: atLeast(0),
	}},
}

// badInputPolicies lists the accepted values of bad-input.
var badInputPolicies = []string{BadInputFail, BadInputDeadLetter}

// sourceSection holds the source section's common keys; each source
// type's own keys are added from the registry (fullSourceSection).
var sourceSection = sectionDef{
	path:  "source",
	intro: "Where the changelog comes from.",
	keys: []keyDef{{
		name: "type", typ: typeString, required: true,
		wantOf: func() string { return "one of: " + strings.Join(known(SourceTypes), ", ") },
		docOf:  sourceTypeDoc,
		field:  func(s any) any { return &s.(*Source).Type },
		check:  oneOfKnown("source type", &SourceTypes),
	}, {
		name: "format", typ: typeString, required: true,
		wantOf: func() string { return "one of: " + strings.Join(known(Formats), ", ") },
		docOf:  func() string { return "The changelog format of the records: " + backquoteList(known(Formats)) + "." },
		field:  func(s any) any { return &s.(*Source).Format },
		check:  oneOfKnown("format", &Formats),
	}, {
		name: "format-options", typ: typeStringMap,
		want: "a mapping of option names to values", defaultDoc: "none",
		doc:   "Options handed to the format's decoder as they are; the decoder rejects options it does not know.",
		field: func(s any) any { return &s.(*Source).FormatOptions },
	}, {
		name: "max-record-bytes", typ: typeSize, unit: "bytes",
		want: "a size such as 64MiB (0 means the default)",
		doc: "The longest record (line) the source accepts. A longer one stops the pipeline with an error naming " +
			"the file and line (it is never cut); raise this when records are legitimately that large. It bounds " +
			"the memory one record can take.",
		field: func(s any) any { return &s.(*Source).MaxRecordBytes },
		check: atLeast(0),
	}},
}

var targetSection = sectionDef{
	path:  "target",
	intro: "The database the changes are applied to.",
	keys: []keyDef{{
		name: "url", typ: typeString, required: true,
		want: "mysql://user:password@host:3306/database, postgres://user:password@host:5432/database, " +
			"sqlite:///absolute/path.db, sqlite://relative/path.db or sqlite::memory:",
		doc: "Where the target database is: `mysql://user:pass@host:3306/db[?params]` (MySQL, MariaDB), " +
			"`postgres://` or `postgresql://user:pass@host:5432/db[?params]`, `sqlite:///abs/path.db`, " +
			"`sqlite://rel/path.db` (relative to the config file's directory), `\"sqlite::memory:\"` (quoted, " +
			"because YAML reads a trailing colon as a key) " +
			"or `starrocks://user:pass@fe-host:8030[,fe2:8030]/db?query-port=9030` (StarRocks 4.0 or later: the FEs' HTTP " +
			"addresses, tried in turn, and their MySQL port; `tls=true`, `tls-ca=FILE`; `txn-timeout=600s`, each transaction's timeout; tested against a fake only, see README). " +
			"A parameter that would change how values are written or read (a time zone, an SQL mode, " +
			"a character set, a date style) is refused when the target is opened: see README's Values. " +
			"`${NAME}` is replaced by the environment variable NAME (percent-encoded inside " +
			"`user:password@`), so secrets need not be in the file; an unset variable is an error.",
		field: func(s any) any { return &s.(*Target).URL },
		check: func(p any) string { return checkURL(*p.(*string)) },
	}},
}

var tableSection = sectionDef{
	path: "tables[]",
	intro: "Routes source tables to target tables. Each change goes to the first entry whose `source` " +
		"pattern matches its table, leaving out `mode: history` entries, and also to every `mode: history` entry " +
		"whose pattern matches it, in the list's order; at least one entry is required. A table that only " +
		"history entries match gets only their rows.",
	keys: []keyDef{{
		name: "source", typ: typeString, required: true,
		want: `a "database.table" pattern such as inventory.orders or inventory.*`,
		doc: "`namespace.name` of the table as the changelog names it. `*` matches any run of characters " +
			"and `?` one character, within the namespace or the name (never across the dot). Matching " +
			"ignores case. A pattern without a dot matches tables that have no namespace.",
		field: func(s any) any { return &s.(*Table).Source },
	}, {
		name: "target", typ: typeString,
		want:       `a table name, "name" or "schema.name", without wildcards`,
		defaultDoc: "the source table's name",
		doc: "The target table, `name` or `schema.name`, written as the target's catalog spells it, without " +
			"quotes (txsink quotes every identifier). Only a `target` may name another database or schema than " +
			"the URL's. Without it, a change goes to the table of the source table's name (the part after the " +
			"first dot) in the URL's database or schema, taken whole, never split at a dot. A source name that " +
			"is empty or holds a dot, a quote (`` ` `` `\"` `'` `[` `]`), a control character (NUL included) or " +
			"white space at either end is refused at its record as bad input, naming the position and the table " +
			"(under `bad-input: dead-letter` the record is quarantined): route such a table with an entry of its " +
			"own that sets `target`. Names beginning with `txsink_progress` or `txsink_dead_letters`, in any " +
			"case, are txsink's own and never a target, in any schema, whether from the changelog or from `target`.",
		field: func(s any) any { return &s.(*Table).Target },
	}, {
		name: "primary-key", typ: typeStrings,
		want:       "a list of column names, such as [id] or [tenant_id, id]",
		defaultDoc: "the target's PRIMARY KEY",
		doc: "The key columns changes are reduced by, in order. It must agree with the target table's " +
			"PRIMARY KEY; `txsink check` reports a mismatch.",
		field: func(s any) any { return &s.(*Table).PrimaryKey },
	}, {
		name: "append-only", typ: typeBool,
		want: "true or false",
		doc: "The table only receives inserts: rows are written with plain batched INSERTs and need no " +
			"key, and an update or delete for it stops the pipeline. Cannot be combined with `primary-key`.",
		field: func(s any) any { return &s.(*Table).AppendOnly },
	}, {
		name: "version-column", typ: typeString,
		want: "the name of a column of the target table that the source fills with a version",
		doc: "A column whose value orders a row's versions (a counter, `updated_at`, a commit position or LSN " +
			"the source fills): an upsert only overwrites a stored row whose version is not newer than its " +
			"own, and a delete only deletes a stored row whose version is not newer than the delete's, so a " +
			"replay, a restore from backup or a second writer never moves a row backwards. NULL is older than " +
			"any version. A delete's version is the version column's value in its before image; when the " +
			"image lacks it, the change's source position (the postgres source's commit LSN + 1, a Kafka offset " +
			"+ 1, a file's byte offset) for an integer column, else the delete is refused; an update that moves a row " +
			"to another key deletes the old key at its own version. An upsert whose image " +
			"lacks the column is refused. Refused changes are counted (`txsink_guard_refused_total`, the " +
			"summary). A hard-deleted row leaves no version behind, so a replay of its changes inserts it again: " +
			"with `delete: soft:COLUMN` the row stays as a tombstone with the delete's version. The column must be an integer, decimal, float, date or timestamp column and not a key " +
			"column; `txsink check` verifies it. Guarded tables are written with guarded multi-row statements, " +
			"never LOAD DATA, COPY or unnest. On StarRocks (Primary Key tables only) upserts are loaded with " +
			"`merge_condition` on the column, which keeps a stored row whose version is greater (an equal one is " +
			"replaced); StarRocks conditions no delete, so a hard delete of such a table is refused (a soft " +
			"delete is an update, conditioned like the upserts; `ignore` works too); a NULL version is refused; and nothing is counted as refused, StarRocks " +
			"not telling which rows it kept (see README's Into StarRocks).",
		field: func(s any) any { return &s.(*Table).VersionColumn },
		check: func(p any) string {
			if v := *p.(*string); v != "" && strings.TrimSpace(v) != v {
				return "has white space at an end"
			}
			return ""
		},
	}, {
		name: "delete", typ: typeString,
		want:       "hard, soft:COLUMN or ignore",
		defaultDoc: "hard",
		doc: "What a delete does: `hard` deletes the row; `soft:COLUMN` keeps it and sets COLUMN to true " +
			"(a boolean column, or 1 in an integer one, as MariaDB's BOOLEAN is) or to the time txsink read the " +
			"delete, in UTC (a nullable timestamp column), and an upsert of the key sets it back (false, 0, NULL), " +
			"reviving the row; a delete of a row inserted in the same flush leaves it marked. `ignore` keeps the " +
			"row as it was (an audit copy), counting the delete (`txsink_deletes_ignored_total`, the summary). " +
			"With `version-column`, a soft delete also sets the row's version to the delete's, so a replay cannot " +
			"revive it with an older change. `txsink check` verifies the soft-delete column's type. On StarRocks a " +
			"soft delete is a `partial_update` load of the key, the column and the version (with `merge_condition` " +
			"when there is a version column), of stored keys only: a key not stored is left out, as the SQL targets' " +
			"UPDATE changes no row.",
		field: func(s any) any { return &s.(*Table).Delete },
		check: func(p any) string {
			v := *p.(*string)
			switch {
			case v == "", v == DeleteHard, v == DeleteIgnore:
				return ""
			case strings.HasPrefix(v, DeleteSoftPrefix):
				if strings.TrimSpace(strings.TrimPrefix(v, DeleteSoftPrefix)) == "" {
					return "soft: names no column, as in soft:deleted"
				}
				return ""
			}
			return fmt.Sprintf("%q is not a delete rule", v)
		},
	}, {
		name: "columns", typ: typeColumns, defaultDoc: "none",
		want:  "a list of columns, such as [{name: id, type: bigint}, {name: email, type: varchar(255), null: false}]",
		doc:   columnsDoc,
		field: func(s any) any { return &s.(*Table).Columns },
	}, {
		name: "mode", typ: typeString,
		want:       "upsert or history",
		defaultDoc: ModeUpsert,
		doc: "`upsert` applies the table's changes by key (or appends them, with `append-only`). `history` appends " +
			"a row for every change, before any per-key reduction, to a table without a key (an SCD-2 or audit " +
			"table): an insert's and an update's row are its after image, a delete's its before image (the columns " +
			"that image lacks are NULL: a delete may carry only the key), each with five columns of txsink's: `__op` " +
			"(`I`, `U` or `D`), `__source_partition` and `__source_offset` (the change's position, as the progress " +
			"table stores it: a file's byte offset past the record, a Kafka offset + 1; the changes of one record " +
			"share it), `__txn_id` (the source transaction's id, NULL where the format carries none) and `__read_at` " +
			"(when txsink read the change, UTC, cut to the column's fractional digits). A `-U` adds no row; the columns " +
			"an image lacks (a delete's before image of only the key, a compressed update image) are left to the " +
			"table (NULL or their default). The rows are written in the " +
			"transaction of the progress they precede, so a replay after a crash adds none twice. The same source " +
			"table can feed one upsert entry and any number of history entries (see `tables[]` above), each with a " +
			"target of its own. The target table must have every column of the changes and the five (a missing one is " +
			"named at start and by `txsink check`), and no key but one of its own the database fills (an " +
			"auto-increment or identity column); with `schema.create: missing` it is created with no key, every " +
			"source column NULL-able. A column of the source named like one of the five is refused at its change. " +
			"Cannot be combined with `primary-key`, `append-only`, `version-column` or `delete`; refused on StarRocks.",
		field: func(s any) any { return &s.(*Table).Mode },
		check: oneOf([]string{ModeUpsert, ModeHistory})}},
}

var schemaSection = sectionDef{
	path:  "schema",
	intro: "What txsink does to the target's tables themselves (see [schema](schema.md) for the types it creates).",
	keys: []keyDef{{
		name: "create", typ: typeString, defaultDoc: SchemaCreateNone,
		want: "one of: " + strings.Join(schemaCreateValues, ", "),
		doc: "`none` (the default): every target table must exist, and a missing one stops the pipeline. " +
			"`missing`: a routed table the target lacks is created, when its first change comes, from the " +
			"changelog's own declaration of it (Debezium's schema envelope, Canal's `mysqlType` and `pkNames`, " +
			"txsink-json's `types`, which the postgres source writes from its catalog), " +
			"with its primary key (the entry's `primary-key`, else the one the records declare: Canal's `pkNames`, " +
			"the schema of a Debezium record's Kafka key; Debezium from files or NATS declares none, so set " +
			"`primary-key` or `append-only` there), by `CREATE TABLE IF NOT EXISTS` " +
			"before the unit that needs it; [schema](schema.md) lists the type each source type gets per server. " +
			"A table whose entry declares `columns` is created from them instead, whatever the format: they " +
			"win over the records' types. Formats that carry no types (maxwell-json, ogg-json, flink-changelog-json) " +
			"need them: with no entry declaring `columns` they are refused at start; a missing table " +
			"whose entry declares none is refused, at start for an entry naming one table, at its first change for " +
			"a pattern, and so is a Debezium record without the schema envelope (or a txsink-json line without `types`). Each refusal names the ways out: " +
			"declare the entry's `columns` (`txsink schema` prints the statement), have the records carry types " +
			"(Debezium's schema envelope, or canal-json), or create the table yourself. `txsink check` prints the " +
			"statement it would run, and `txsink schema` the statement of every routed table it sees in the source " +
			"and of every entry without a wildcard that declares `columns`. An existing table is never altered but by `schema.evolve`.",
		field: func(s any) any { return &s.(*Schema).Create },
		check: oneOf(schemaCreateValues),
	}, {
		name: "evolve", typ: typeStrings, defaultDoc: SchemaEvolveNone,
		want: "one of " + strings.Join(schemaEvolveValues, ", ") + ", or a list of " + SchemaEvolveAddColumns + " and " + SchemaEvolveWiden,
		doc: "What txsink changes on an existing target table when the source's table changes: `none` (the default), " +
			"or `add-columns`, `widen` or both (`[add-columns, widen]`). Without `add-columns`, a change carrying a " +
			"column the target table lacks stops the pipeline, naming the table, the column and the position. " +
			"`add-columns`: the column is added to the target " +
			"table (NULL-able, with the type the change's record declares: Debezium's schema envelope, Canal's " +
			"`mysqlType`, and the source's default when the record declares one), before the change is applied. " +
			"On PostgreSQL and SQLite the `ALTER TABLE ... ADD COLUMN` runs in the transaction of the unit that needs " +
			"the column: the column and its rows commit together or not at all. On MariaDB (`ADD COLUMN IF NOT EXISTS`) " +
			"and MySQL it runs in a step of its own before the unit, and a crash between the two is harmless: the " +
			"column is there, and the run resumes. The pipeline starts again from its last commit once, when it meets " +
			"the column. A second instance adding the same column goes on (docs/schema.md says what is atomic where). " +
			"A column the record does not declare is refused. " +
			"`widen`: when a value does not fit its column and the change's record declares the column wider " +
			"(a longer `VARCHAR`, `CHAR` or `VARBINARY`, a `DECIMAL` with more digits and the same scale, a wider " +
			"integer, more fractional-second digits), the column is widened (MySQL/MariaDB `MODIFY COLUMN` keeping " +
			"its NULL-ability, default, character set and collation; PostgreSQL `ALTER COLUMN ... TYPE`; SQLite " +
			"changes no DDL, see [schema](schema.md)) and the pipeline starts again from its last commit; without it the " +
			"value is refused, naming the option and the statement. Narrowing, type changes, drops and key changes " +
			"are never made: the refusal names the change and the statement to run by hand.",
		field: func(s any) any { return &s.(*Schema).Evolve },
		check: checkEvolve,
	}},
}

// schemaCreateValues and schemaEvolveValues list the accepted values of
// schema.create and schema.evolve.
var (
	schemaCreateValues = []string{SchemaCreateNone, SchemaCreateMissing}
	schemaEvolveValues = []string{SchemaEvolveNone, SchemaEvolveAddColumns, SchemaEvolveWiden}
)

// checkEvolve checks schema.evolve: known values, each once, and none
// only alone.
func checkEvolve(p any) string {
	l := *p.(*[]string)
	for i, v := range l {
		switch {
		case !slices.Contains(schemaEvolveValues, v):
			return fmt.Sprintf("unknown value %q", v)
		case v == SchemaEvolveNone && len(l) > 1:
			return SchemaEvolveNone + " cannot be listed with other values"
		case slices.Contains(l[:i], v):
			return fmt.Sprintf("%q is listed twice", v)
		}
	}
	return ""
}

// oneOf returns a check that a string field is "" or one of values.
func oneOf(values []string) func(any) string {
	return func(p any) string {
		if v := *p.(*string); v != "" && !slices.Contains(values, v) {
			return fmt.Sprintf("unknown value %q", v)
		}
		return ""
	}
}

var sinkSection = sectionDef{
	path: "sink",
	intro: "How changes are batched and committed. The keys are flat dotted names, as in the Flink JDBC " +
		"and StarRocks connectors (`buffer-flush.max-rows: 1000`); the connectors' `sink.` prefix is " +
		"accepted too, and so is nesting (`buffer-flush: {max-rows: 1000}`).",
	keys: []keyDef{{
		name: "buffer-flush.max-rows", typ: typeInt, unit: "rows",
		want: "a whole number of rows, at least 1",
		doc: "Plain mode: commit once the buffer holds this many rows after per-key reduction. Multi-table mode: commit " +
			"once the finished source transactions not yet committed hold this many rows, without waiting for " +
			"`buffer-flush.interval`, counted after per-key reduction as in plain mode: the changes of one key count one " +
			"row (an update's before and after images together), a transaction's END event none. A commit takes whole " +
			"transactions only, so it may hold a few more.",
		field: func(s any) any { return &s.(*Sink).FlushMaxRows },
		check: atLeast(1),
	}, {
		name: "buffer-flush.max-bytes", typ: typeSize, unit: "bytes",
		want: "a size of at least 1 byte, such as 16MiB",
		doc: "Plain mode: the bytes of rows txsink holds, the flush being read and the one being committed together, " +
			"so a flush is committed once its rows take half this many (counted as the memory the reduced rows take: their values, keys and bookkeeping, not the records they came from). " +
			"Multi-table mode: commit once the finished source transactions not yet committed take this many bytes.",
		field: func(s any) any { return &s.(*Sink).FlushMaxBytes },
		check: atLeast(1),
	}, {
		name: "buffer-flush.interval", typ: typeDuration,
		want:  "a duration of 0 or more, such as 1s or 200ms",
		doc:   "Commit at least this often (plain mode: what is buffered; multi-table mode: every finished source transaction, the commit interval). `0` disables the timer: only the size limits and the end of input commit.",
		field: func(s any) any { return &s.(*Sink).FlushInterval },
		check: atLeast(0),
	}, {
		name: "buffer-flush.interval-ms", typ: typeMillis, unit: "ms", aliasOf: "buffer-flush.interval",
		want:  "a whole number of milliseconds, 0 or more",
		doc:   "`buffer-flush.interval` in milliseconds, as the StarRocks connector spells it.",
		field: func(s any) any { return &s.(*Sink).FlushInterval },
	}, {
		name: "buffer-flush.coalesce", typ: typeBool,
		want: "true or false",
		doc: "While the target is still committing the previous flush, a flush that reaches `buffer-flush.max-rows` " +
			"or the interval keeps taking changes, reduced per key, and is committed as soon as that commit ends, or " +
			"once it reaches its share of `buffer-flush.max-bytes` (multi-table mode: once the finished transactions " +
			"take `buffer-flush.max-bytes`). Commits then grow to what the target can take in the time it takes, the " +
			"target never waits for txsink, and a key changed again meanwhile is written once. `false`: a due flush " +
			"waits for the commit in flight with reading stopped, as the Flink JDBC sink does, so that no commit holds " +
			"more than `max-rows` rows (in multi-table mode, but for the last transaction it takes).",
		field: func(s any) any { return &s.(*Sink).FlushCoalesce },
	}, {
		name: "max-retries", typ: typeInt,
		want:  "a whole number, 0 or more",
		doc:   "How many times a transient target error (lost connection, deadlock, serialization failure) is retried before the pipeline stops. `0` never retries.",
		field: func(s any) any { return &s.(*Sink).MaxRetries },
		check: atLeast(0),
	}, {
		name: "key-partitions.remember", typ: typeInt, unit: "keys",
		want: fmt.Sprintf("a whole number of keys, 0 to %d", maxKeyPartitions),
		doc: "Order is only known inside a partition, so one key's changes must stay in one partition: a key whose changes " +
			"come from two partitions stops the pipeline with an error naming the table, the key, both partitions and " +
			"both positions, under every `bad-input` policy (dead-lettering one of the two changes would leave the target " +
			"holding whichever came first; the layout must be fixed). Within one commit every such key is found. Across " +
			"commits txsink remembers the partition of the keys of the last this many key writes (a key counts once per " +
			"commit that writes it; in multi-table mode once per partition's batch of finished transactions), so a key is " +
			"checked against its last write as long as fewer than this many key writes came after it: set it above the keys " +
			"one partition writes before another may write them again (day-1 and day-2 files read at once: the keys of " +
			"both). It costs 32 bytes per key (32 MB for 1,000,000), allocated as keys come, and nothing when the source has " +
			"one partition (a file source without `source.partitions`); `txsink run`'s memory limit grows by as much. A stop is never false: keys are compared by a 128-bit hash. `0` turns the memory off, keeping the check within a commit. " +
			"Transactions joined across topics (`source.transaction-topic`) are ordered across partitions, and not checked.",
		field: func(s any) any { return &s.(*Sink).KeyPartitionsRemember },
		check: func(p any) string {
			if v := *p.(*int); v < 0 {
				return fmt.Sprint(v, " is negative")
			} else if v > maxKeyPartitions {
				return fmt.Sprint(v, " is too large")
			}
			return ""
		},
	}, {
		name: "transaction.multi-table.enabled", typ: typeBool,
		want:  "true or false",
		doc:   "Commit whole source transactions, across all their tables, atomically: the changes of a partition are grouped at the transaction ends the format marks (Debezium END events, Maxwell `commit`, txsink-json `txn_end`; a change with no transaction id is a transaction of its own), and several finished transactions are reduced per key and committed in one target transaction. An unfinished transaction is never committed.",
		field: func(s any) any { return &s.(*Sink).TxnEnabled },
	}, {
		name: "transaction.multi-table.buffer-size", typ: typeSize, unit: "bytes",
		want:  "a size of at least 1 byte, such as 128MiB",
		doc:   "Multi-table mode: the bytes buffered over all partitions and tables. At this size every finished transaction is committed without waiting for the interval; at twice this size reading stops until a commit frees memory.",
		field: func(s any) any { return &s.(*Sink).TxnBufferSize },
		check: atLeast(1),
	}, {
		name: "transaction.multi-table.mini-switch-interval-ms", typ: typeMillis, unit: "ms", auto: true,
		want: "a whole number of milliseconds, 0 or more, or -1 for automatic",
		doc: "Multi-table mode: the least time between two chunk switches of one partition; source " +
			"transactions arriving in between are committed together. `-1` means " +
			"min(1000, max(100, buffer-flush.interval-ms / 10)), the StarRocks connector's own computation.",
		field: func(s any) any { return &s.(*Sink).TxnMiniSwitchInterval },
		check: func(p any) string {
			if d := *p.(*time.Duration); d < 0 && d != MiniSwitchAuto {
				return fmt.Sprintf("%v is negative", d)
			}
			return ""
		},
	}, {
		name: "transaction.multi-table.mini-switch-interval", typ: typeDuration, auto: true,
		aliasOf: "transaction.multi-table.mini-switch-interval-ms",
		want:    "a duration of 0 or more, such as 500ms, or auto",
		doc:     "`transaction.multi-table.mini-switch-interval-ms` as a duration, or `auto`.",
		field:   func(s any) any { return &s.(*Sink).TxnMiniSwitchInterval },
	}, {
		name: "transaction.multi-table.min-switch-bytes", typ: typeSize, unit: "bytes",
		want: "a size of 0 or more, such as 1MiB",
		doc: "Multi-table mode: a time-triggered chunk switch waits until the partition's active chunk " +
			"holds this many bytes, so quiet partitions batch more source transactions per commit. A full " +
			"`buffer-flush.interval` forces the switch regardless. `0` disables the threshold.",
		field: func(s any) any { return &s.(*Sink).TxnMinSwitchBytes },
		check: atLeast(0),
	}, {
		name: "transaction.multi-table.max-txn-bytes", typ: typeSize, unit: "bytes", auto: true, unlimited: true,
		want:       "a size of 0 or more, such as 1GiB (0 = unlimited)",
		defaultDoc: "auto (`transaction.multi-table.buffer-size`)",
		doc: "Multi-table mode: a source transaction is held, decoded, until its end; one whose decoded changes " +
			"would take more memory than this stops the pipeline with an error naming the transaction, its " +
			"partition and first position, and nothing of it is committed. `auto` (the default) is " +
			"`transaction.multi-table.buffer-size`, so that memory stays bounded by the buffer (see " +
			"[operations](operations.md#deploy) for the peak RSS measured at the limit); an insert of a narrow row takes " +
			"about 970 bytes decoded, whatever its record's length. `unlimited` (or `0`) refuses none: a transaction " +
			"larger than the host's memory then ends the process.",
		field: func(s any) any { return &s.(*Sink).TxnMaxTxnBytes },
		check: func(p any) string {
			if v := *p.(*int64); v < 0 && v != MaxTxnBytesAuto {
				return fmt.Sprintf("%d is negative", v)
			}
			return ""
		},
	}},
}

// maxKeyPartitions is reduce.MaxKeyPartitions, the most key writes the
// memory of sink.key-partitions.remember holds, repeated so that config
// needs no core package (TestMaxKeyPartitions checks that they agree).
const maxKeyPartitions = 1<<26 - 2

// sections lists the sections in the order the documentation shows them,
// the source section with the keys of every source type.
func sections() []*sectionDef {
	return []*sectionDef{&topSection, fullSourceSection(), &targetSection, &tableSection, &sinkSection, &schemaSection}
}

// foreignKeys are options of the seed connectors that txsink does not have,
// with what to do instead. The decoder names them when a file carries one.
var foreignKeys = map[string]string{
	"semantic": "txsink always commits exactly once (progress is written in the same target transaction as the data); remove the key",
	"version":  "txsink has a single sink implementation; remove the key",
}

// atLeast returns a check that an integer or duration field is >= n.
func atLeast(n int64) func(any) string {
	return func(p any) string {
		var v int64
		var s string
		switch p := p.(type) {
		case *int:
			v, s = int64(*p), fmt.Sprint(*p)
		case *int64:
			v, s = *p, fmt.Sprint(*p)
		case *time.Duration:
			v, s = int64(*p), p.String()
		default:
			panic(fmt.Sprintf("config: atLeast on %T", p))
		}
		if v >= n {
			return ""
		}
		if v < 0 {
			return s + " is negative"
		}
		return s + " is too small"
	}
}

// key returns the definition named name, or nil.
func (s *sectionDef) key(name string) *keyDef {
	for i := range s.keys {
		if s.keys[i].name == name {
			return &s.keys[i]
		}
	}
	return nil
}

// names returns every key the section accepts, children included.
func (s *sectionDef) names() []string {
	var n []string
	for _, k := range s.keys {
		n = append(n, k.name)
	}
	return append(n, s.children...)
}

// keyPath joins a section path and a key: "sink" + "x" = "sink.x",
// "" + "name" = "name".
func keyPath(section, key string) string {
	if section == "" {
		return key
	}
	return section + "." + key
}

func backquoteList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = "`" + s + "`"
	}
	return strings.Join(q, ", ")
}

// wantText is what a valid value of k is, for messages.
func (k *keyDef) wantText() string {
	if k.wantOf != nil {
		return k.wantOf()
	}
	return k.want
}

// docText is k's description in the reference documentation.
func (k *keyDef) docText() string {
	if k.docOf != nil {
		return k.docOf()
	}
	return k.doc
}
