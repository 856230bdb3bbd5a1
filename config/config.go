// Package config turns a txsink pipeline's YAML file into a typed, validated
// Config.
//
// One table of key definitions (keys.go, with the keys each registered
// source type declares, see source.Keyed) drives the parser, the validator
// and the reference documentation (Reference, docs/config.md), so the three
// cannot disagree; it is also the only place a key is described. Parsing is strict: an unknown key anywhere is an error that names
// the key, its line and, when a known key is close, the key that was probably
// meant. Every error names the YAML key path (for example
// "tables[1].source") and says what to do; Parse and Load report all problems
// of a file at once as an ErrorList.
//
// A minimal file:
//
//	name: orders-sync
//	source:
//	  type: file
//	  paths: [p0.jsonl, p1.jsonl]
//	  format: debezium-json
//	target:
//	  url: mysql://user:${DB_PASSWORD}@127.0.0.1:3306/test
//	tables:
//	  - source: inventory.orders
//	    primary-key: [id]
//	sink:
//	  buffer-flush.max-rows: 1000
//	  buffer-flush.interval: 1s
//
// Go programs that embed txsink may build a Config themselves: start from
// Default, fill in the fields, and call Validate.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/source"
	"go.yaml.in/yaml/v3"
)

// Config is one pipeline: where changes come from, where they go, which
// tables they name and how the sink batches them.
//
// Each field is one key (or section) of the YAML file. What a key means,
// its default and its range are documented once, in the key table
// (keys.go, and each source type's Keys), which docs/config.md is printed
// from; the field comments only name the key.
type Config struct {
	// Name is `name`; see docs/config.md.
	Name string
	// Source is the `source` section; see docs/config.md.
	Source Source
	// Target is the `target` section; see docs/config.md.
	Target Target
	// Tables is the `tables` section; see docs/config.md. Route changes
	// with Match.
	Tables []Table
	// SkipUnknownTables is `skip-unknown-tables`; see docs/config.md.
	SkipUnknownTables bool
	// StartupTimeout is `startup-timeout`; see docs/config.md.
	StartupTimeout time.Duration
	// BadInput is `bad-input`; see docs/config.md. One of BadInputFail
	// and BadInputDeadLetter.
	BadInput string
	// Sink is the `sink` section; see docs/config.md.
	Sink Sink
	// Schema is the `schema` section; see docs/config.md.
	Schema Schema
}

// Schema says what txsink does to the target's tables themselves.
type Schema struct {
	// Create is `schema.create`; see docs/config.md. One of
	// SchemaCreateNone ("" too) and SchemaCreateMissing.
	Create string
	// Evolve is `schema.evolve`; see docs/config.md. Empty, or
	// SchemaEvolveNone alone, or SchemaEvolveAddColumns and
	// SchemaEvolveWiden, each at most once.
	Evolve []string
}

// The values of schema.create.
const (
	SchemaCreateNone    = "none"
	SchemaCreateMissing = "missing"
)

// The values of schema.evolve.
const (
	SchemaEvolveNone       = "none"
	SchemaEvolveAddColumns = "add-columns"
	SchemaEvolveWiden      = "widen"
)

// AddsColumns reports whether a column the source adds is added to the
// target table (schema.evolve lists add-columns).
func (c *Config) AddsColumns() bool { return slices.Contains(c.Schema.Evolve, SchemaEvolveAddColumns) }

// Widens reports whether a column the source widens (a longer VARCHAR,
// a DECIMAL with more digits, a wider integer, more fractional-second
// digits) is widened on the target (schema.evolve lists widen).
func (c *Config) Widens() bool { return slices.Contains(c.Schema.Evolve, SchemaEvolveWiden) }

// CreatesTables reports whether a missing target table is created
// (schema.create: missing).
func (c *Config) CreatesTables() bool { return c.Schema.Create == SchemaCreateMissing }

// Source says where the changelog comes from: the keys every source type
// has, and the chosen type's own keys in Raw. The source type declares
// those (source.Keyed) and decodes them from Settings into its own config
// struct; package config parses, checks and documents them from the
// registry without knowing any source.
type Source struct {
	// Type is `source.type`; see docs/config.md.
	Type string
	// Format is `source.format`; see docs/config.md.
	Format string
	// FormatOptions is `source.format-options`; see docs/config.md.
	FormatOptions map[string]string
	// MaxRecordBytes is `source.max-record-bytes`; see docs/config.md.
	MaxRecordBytes int64
	// Raw holds the keys of the source type's own that are set, by name
	// ("paths", "sasl.user"), each a value of its source.KeyType's Go
	// type; Parse and Load have made relative paths absolute and expanded
	// ${NAME}. Build it with Set; read it through Settings, which fills in
	// the defaults.
	Raw source.Settings
}

// Target says which database the changes are applied to.
type Target struct {
	// URL is `target.url`; see docs/config.md. Parse and Load have
	// expanded ${NAME} in it.
	//
	// Print URL only through RedactURL (or Target's String method): after
	// expansion it may hold a password.
	URL string
}

// Table routes the changes of one or more source tables to one target table.
type Table struct {
	// Source is `tables[].source`; see docs/config.md. Match with Matches.
	Source string
	// Target is `tables[].target`; see docs/config.md. Use Resolve rather
	// than reading it directly.
	Target string
	// PrimaryKey is `tables[].primary-key`; see docs/config.md.
	PrimaryKey []string
	// AppendOnly is `tables[].append-only`; see docs/config.md.
	AppendOnly bool
	// VersionColumn is `tables[].version-column`; see docs/config.md.
	VersionColumn string
	// Delete is `tables[].delete`; see docs/config.md. Read it with
	// DeleteRule.
	Delete string
	// Columns is `tables[].columns`; see docs/config.md. Empty when the
	// entry declares none.
	Columns []Column
	// Mode is `tables[].mode`; see docs/config.md. Read it with
	// IsHistory.
	Mode string
}

// Column is one entry of `tables[].columns`: a column of the target table
// the entry declares. Parse and Validate refuse an unknown type, a name
// declared twice and a key column not declared, naming the entry.
type Column struct {
	// Name is the column's name, as the target table spells it.
	Name string
	// Type is its type in MySQL's spelling ("bigint", "varchar(255)"),
	// read by coltype.ParseMySQL.
	Type string
	// Null is `null:`; nil when the entry leaves it out: the column is
	// then NULL-able, unless it is a primary-key column.
	Null *bool
	// Default is `default:`, the column's DEFAULT as text, converted for
	// the column as a value is; nil for none.
	Default *string
}

// Nullable reports whether the column takes NULL: unless `null: false`,
// or it is one of key's columns.
func (c *Column) Nullable(key []string) bool {
	return !isKeyColumn(key, c.Name) && (c.Null == nil || *c.Null)
}

// The values of Table.Mode: ModeUpsert ("" too) and ModeHistory.
const (
	ModeUpsert  = "upsert"
	ModeHistory = "history"
)

// IsHistory reports whether the entry is a history table: every change
// of the tables it matches appended as a row of its own (see
// docs/config.md), beside the upsert entry that also matches them.
func (t *Table) IsHistory() bool { return t.Mode == ModeHistory }

// The values of Table.Delete: DeleteHard, DeleteIgnore, and
// DeleteSoftPrefix followed by a column name.
const (
	DeleteHard       = "hard"
	DeleteIgnore     = "ignore"
	DeleteSoftPrefix = "soft:"
)

// DeleteRule reads Delete: the soft-delete column ("" unless soft), and
// whether deletes are ignored. "" and "hard" delete rows.
func (t *Table) DeleteRule() (softColumn string, ignore bool) {
	if col, ok := strings.CutPrefix(t.Delete, DeleteSoftPrefix); ok {
		return strings.TrimSpace(col), false
	}
	return "", t.Delete == DeleteIgnore
}

// The bad-input policies.
const (
	BadInputFail       = "fail"
	BadInputDeadLetter = "dead-letter"
)

// MiniSwitchAuto is the value of Sink.TxnMiniSwitchInterval that asks for
// the automatic interval (YAML -1 in mini-switch-interval-ms, "auto" in
// mini-switch-interval); see Sink.MiniSwitchInterval.
const MiniSwitchAuto time.Duration = -1

// Sink holds the settings of the sink side, the `sink` section.
type Sink struct {
	// FlushMaxRows is `sink.buffer-flush.max-rows`; see docs/config.md.
	FlushMaxRows int
	// FlushMaxBytes is `sink.buffer-flush.max-bytes`; see docs/config.md.
	FlushMaxBytes int64
	// FlushInterval is `sink.buffer-flush.interval` (or
	// `sink.buffer-flush.interval-ms`); see docs/config.md.
	FlushInterval time.Duration
	// FlushCoalesce is `sink.buffer-flush.coalesce`; see docs/config.md.
	FlushCoalesce bool
	// MaxRetries is `sink.max-retries`; see docs/config.md.
	MaxRetries int
	// KeyPartitionsRemember is `sink.key-partitions.remember`; see
	// docs/config.md.
	KeyPartitionsRemember int

	// TxnEnabled is `sink.transaction.multi-table.enabled`; see
	// docs/config.md.
	TxnEnabled bool
	// TxnBufferSize is `sink.transaction.multi-table.buffer-size`; see
	// docs/config.md.
	TxnBufferSize int64
	// TxnMiniSwitchInterval is
	// `sink.transaction.multi-table.mini-switch-interval-ms` (or
	// `sink.transaction.multi-table.mini-switch-interval`); see
	// docs/config.md. Read it through MiniSwitchInterval.
	TxnMiniSwitchInterval time.Duration
	// TxnMinSwitchBytes is `sink.transaction.multi-table.min-switch-bytes`;
	// see docs/config.md.
	TxnMinSwitchBytes int64
	// TxnMaxTxnBytes is `sink.transaction.multi-table.max-txn-bytes`; see
	// docs/config.md. Read it through MaxTxnBytes.
	TxnMaxTxnBytes int64
}

// MaxTxnBytesAuto is the value of Sink.TxnMaxTxnBytes that asks for the
// default limit, TxnBufferSize (YAML "auto"); see Sink.MaxTxnBytes.
const MaxTxnBytesAuto int64 = -1

// MaxTxnBytes returns TxnMaxTxnBytes, resolving MaxTxnBytesAuto to
// TxnBufferSize; 0 means no limit.
//
// The buffer size is the default because a transaction that does not fit
// the buffer cannot be held within the memory the buffer promises: every
// byte of an open transaction stays until its end, and nothing can be
// committed or dropped to make room for it. A larger limit, or none, is a
// choice to make for a host with the memory.
func (s Sink) MaxTxnBytes() int64 {
	if s.TxnMaxTxnBytes == MaxTxnBytesAuto {
		return s.TxnBufferSize
	}
	return s.TxnMaxTxnBytes
}

// MiniSwitchInterval returns TxnMiniSwitchInterval, resolving
// MiniSwitchAuto the way the StarRocks connector does:
// min(1s, max(100ms, FlushInterval/10)).
//
// Seed 001 gives two formulas: its option table says min(1000, max(500,
// interval/4)), its description of the connector's code and of data
// visibility says min(1000, max(100, interval/10)). txsink follows the
// code: at a 1s interval a finished transaction is visible within about
// 1.1s instead of 1.5s, at the cost of more, smaller switches.
func (s Sink) MiniSwitchInterval() time.Duration {
	if s.TxnMiniSwitchInterval != MiniSwitchAuto {
		return s.TxnMiniSwitchInterval
	}
	return min(time.Second, max(100*time.Millisecond, s.FlushInterval/10))
}

// Default returns a Config holding every default; it is the only place
// defaults are set. Name, Source, Target and Tables have none: they must be
// filled in.
func Default() Config {
	return Config{
		BadInput:       BadInputFail,
		StartupTimeout: 60 * time.Second,
		Source:         Source{MaxRecordBytes: 64 << 20},
		Sink: Sink{
			FlushMaxRows:          5000,
			FlushMaxBytes:         16 << 20,
			FlushInterval:         time.Second,
			FlushCoalesce:         true,
			MaxRetries:            10,
			KeyPartitionsRemember: 1_000_000,
			TxnBufferSize:         128 << 20,
			TxnMiniSwitchInterval: MiniSwitchAuto,
			TxnMinSwitchBytes:     1 << 20,
			TxnMaxTxnBytes:        MaxTxnBytesAuto,
		},
	}
}

// Load reads the YAML file at path and parses it with relative paths taken
// from the file's directory. Errors are an ErrorList whose entries carry the
// file name and line.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return parse(data, dir, path)
}

// Parse parses a YAML configuration. Relative source paths and relative
// SQLite paths are joined to baseDir; with baseDir "" they stay relative to
// the working directory. ${NAME} references in target.url are expanded from
// the environment. The result has defaults applied and is validated; errors
// are an ErrorList.
func Parse(data []byte, baseDir string) (*Config, error) {
	return parse(data, baseDir, "")
}

func parse(data []byte, baseDir, file string) (*Config, error) {
	root, err := readDocument(data)
	if err != nil {
		line, msg := lineOf(err)
		return nil, ErrorList{{File: file, Line: line, Msg: msg}}
	}
	d := &decoder{file: file, baseDir: baseDir, lines: map[string]int{}, meant: map[string]bool{}}
	c := Default()
	d.config(&c, root)
	// A key the decoder could not read keeps its default; validating that
	// default would report the key a second time, and wrongly.
	skip := d.meant
	for _, e := range d.errs {
		skip[e.Key] = true
	}
	d.errs = append(d.errs, c.validate(d.file, d.lines, skip)...)
	if len(d.errs) > 0 {
		return nil, d.errs.sorted()
	}
	return &c, nil
}

// readDocument decodes data into the root mapping node of its only document.
func readDocument(data []byte) (*yaml.Node, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("the configuration is empty; see docs/config.md for the keys")
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF { // only comments
			return nil, errors.New("the configuration is empty; see docs/config.md for the keys")
		}
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	for {
		var extra yaml.Node
		err := dec.Decode(&extra)
		if err == io.EOF {
			return &doc, nil
		}
		if err != nil {
			return nil, fmt.Errorf("not valid YAML: %w", err)
		}
		// A trailing "---" with nothing after it is harmless.
		if len(extra.Content) > 0 && !isNull(extra.Content[0]) {
			return nil, &lineError{extra.Line, "a second YAML document (after ---) follows; put one pipeline in one file"}
		}
	}
}

// lineError is an error known to sit on one line of the file.
type lineError struct {
	line int
	msg  string
}

func (e *lineError) Error() string { return e.msg }

// yamlLine finds the line in the YAML parser's messages: "yaml: line 3: ...".
var yamlLine = regexp.MustCompile(`yaml: line (\d+): `)

// lineOf splits the line an error is on from its message.
func lineOf(err error) (int, string) {
	var le *lineError
	if errors.As(err, &le) {
		return le.line, le.msg
	}
	msg := err.Error()
	if m := yamlLine.FindStringSubmatchIndex(msg); m != nil {
		line, _ := strconv.Atoi(msg[m[2]:m[3]])
		rest := msg[:m[0]] + msg[m[1]:]
		if strings.Contains(rest, "did not find expected") {
			// yaml.v3 numbers a parser error (an unclosed { or [, a
			// block left unfinished) by the line of what it was parsing
			// counted from 0, one short of the line the bracket or block
			// starts on.
			line++
		}
		return line, rest
	}
	return 0, msg
}

// Validate checks a Config built in Go: required fields, ranges, URL form,
// table patterns. It returns an ErrorList naming each wrong field by its YAML
// key path. Parse and Load call it already. Validate takes URL and paths as
// they are: expanding ${NAME} and resolving relative paths is Parse's work.
func (c *Config) Validate() error {
	if errs := c.validate("", nil, nil); len(errs) > 0 {
		return errs
	}
	return nil
}

// Match returns the first Tables entry that is not a history entry (see
// Table.IsHistory) whose Source pattern matches t, and whether there is
// one; History returns the history entries that match t. Matching ignores case (MySQL and SQLite table names
// usually do), and "*" and "?" match within the namespace or the name, never
// across the dot. Match scans the entries in order; callers that route every
// change should remember the answer per table.
func (c *Config) Match(t changelog.Table) (*Table, bool) {
	for i := range c.Tables {
		if !c.Tables[i].IsHistory() && c.Tables[i].Matches(t) {
			return &c.Tables[i], true
		}
	}
	return nil, false
}

// History returns every history entry (Table.IsHistory) whose Source
// pattern matches t, in the order of Tables: each gets a row of every
// change of t, whichever entry Match returns for it.
func (c *Config) History(t changelog.Table) []*Table {
	var out []*Table
	for i := range c.Tables {
		if c.Tables[i].IsHistory() && c.Tables[i].Matches(t) {
			out = append(out, &c.Tables[i])
		}
	}
	return out
}

// Matches reports whether the entry's Source pattern matches t; see
// Config.Match for the rules.
func (tb *Table) Matches(t changelog.Table) bool {
	ns, name, dotted := splitTableName(tb.Source)
	if !dotted {
		return t.Namespace == "" && globMatch(tb.Source, t.Name)
	}
	return globMatch(ns, t.Namespace) && globMatch(name, t.Name)
}

// String returns the URL with its password hidden, so a Target (or a Config
// holding one) can be logged or printed with %v safely.
func (t Target) String() string { return RedactURL(t.URL) }

// GoString hides the password from %#v too.
func (t Target) GoString() string { return fmt.Sprintf("config.Target{URL:%q}", RedactURL(t.URL)) }

// Kind returns the target's database family from the URL scheme: "mysql",
// "postgres", "sqlite" or "starrocks"; "" when the scheme is not one
// txsink knows.
func (t Target) Kind() string {
	k, _ := targetKind(t.URL)
	return k
}
