// Package config turns a txsink pipeline's YAML file into a typed, validated
// Config.
//
// One table of key definitions (keys.go) drives the parser, the validator and
// the reference documentation (Reference, docs/config.md), so the three cannot
// disagree. Parsing is strict: an unknown key anywhere is an error that names
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
	"reflect"
	"regexp"
	"strconv"
	"time"

	"github.com/txsink/txsink/changelog"
	"go.yaml.in/yaml/v3"
)

// Config is one pipeline: where changes come from, where they go, which
// tables they name and how the sink batches them.
type Config struct {
	// Name names the pipeline (YAML "name"). The target's progress rows are
	// keyed by it, so two pipelines writing to one target need different
	// names, and renaming a pipeline starts it over from the beginning.
	// Required: 1 to 128 of A-Z a-z 0-9 _ . -
	Name string
	// Source says what to read (YAML "source").
	Source Source
	// Target says where to write (YAML "target").
	Target Target
	// Tables routes source tables to target tables (YAML "tables"). The
	// first entry whose Source pattern matches a change's table wins; see
	// Match. At least one entry.
	Tables []Table
	// SkipUnknownTables makes changes of tables that no entry matches be
	// skipped (and counted) instead of stopping the pipeline (YAML
	// "skip-unknown-tables"). Default false: an unknown table is an error,
	// so a table added upstream is never dropped silently.
	SkipUnknownTables bool
	// BadInput is the policy for changes txsink cannot apply (YAML
	// "bad-input"): BadInputFail (the default) stops the pipeline;
	// BadInputDeadLetter quarantines the whole source transaction in the
	// target and goes on.
	BadInput string
	// Sink tunes batching, retries and multi-table transactions (YAML
	// "sink").
	Sink Sink
}

// Source says where the changelog comes from.
type Source struct {
	// Type is the kind of source (YAML "source.type"). Required: "file"
	// (newline-delimited files) or "kafka" (topics of a Kafka cluster, read
	// by a consumer group). Keys of the other kind are refused.
	Type string
	// Paths lists the files of a source of one partition (YAML
	// "source.paths"): they are read one after another, in the order
	// listed, as one ordered lane; an entry may be a glob, whose matches
	// are read in name order. "-" reads standard input and must be the
	// only entry. Parse and Load make relative paths absolute against the
	// config file's directory, so the pipeline reads the same files from
	// any working directory. Paths or Partitions, not both; no path twice.
	Paths []string
	// Partitions lists the partitions of a source of several (YAML
	// "source.partitions"), read concurrently: each is an ordered
	// sequence of files, as Paths is for one. Order is kept within a
	// partition only.
	Partitions [][]string
	// Format is the changelog format of the records (YAML "source.format").
	// Required; one of the names format/formats.Names returns
	// ("debezium-json", "canal-json", "maxwell-json", "ogg-json",
	// "flink-changelog-json", "txsink-json").
	Format string
	// FormatOptions are passed to the format's decoder as they are (YAML
	// "source.format-options"); the decoder rejects options it does not
	// know. Default none.
	FormatOptions map[string]string
	// Follow makes the source wait for files to grow instead of stopping at
	// their end, like tail -f (YAML "source.follow"). Default false.
	Follow bool
	// MaxRecordBytes is the longest record the source accepts (YAML
	// "source.max-record-bytes"). Default 64 MiB; 0 also means 64 MiB.
	MaxRecordBytes int64

	// The keys below apply to the kafka source only.

	// Brokers are the seed brokers, host:port (YAML "source.brokers").
	// Required for kafka.
	Brokers []string
	// Topics are the topics to read (YAML "source.topics"). Kafka needs
	// Topics or TopicRegex, not both.
	Topics []string
	// TopicRegex reads every topic whose whole name matches it (YAML
	// "source.topic-regex"), including topics created later.
	TopicRegex string
	// TransactionTopic is Debezium's transaction topic for the data topics
	// (YAML "source.transaction-topic"). When set, txsink joins each
	// source transaction's events across the data topics by the END events
	// there, and commits whole transactions in source commit order; one
	// instance of the group reads every partition and the others stand
	// by. Needs transaction mode and the debezium-json format.
	TransactionTopic string
	// Group is the Kafka consumer group (YAML "source.group"). Instances
	// of one pipeline share it; Kafka spreads the partitions over them.
	// Required for kafka.
	Group string
	// Start is where a partition with no stored progress starts (YAML
	// "source.start"): StartEarliest (the default) or StartLatest.
	Start string
	// SessionTimeout is how long the group waits for a silent member
	// before giving its partitions to others (YAML
	// "source.session-timeout"). 0 means the default, 45s.
	SessionTimeout time.Duration
	// TLS turns on TLS to the brokers (YAML "source.tls"); implied by
	// TLSCA, TLSCert and TLSKey.
	TLS bool
	// TLSCA, TLSCert and TLSKey are PEM files: the CA that signs the
	// brokers' certificates (default: the system's), and the client's
	// certificate and key for mutual TLS (YAML "source.tls-ca",
	// "source.tls-cert", "source.tls-key").
	TLSCA, TLSCert, TLSKey string
	// SASLMechanism is the SASL mechanism (YAML "source.sasl.mechanism"):
	// "PLAIN", "SCRAM-SHA-256" or "SCRAM-SHA-512"; empty for none.
	SASLMechanism string
	// SASLUser and SASLPassword are the SASL credentials (YAML
	// "source.sasl.user", "source.sasl.password"); ${NAME} in them is
	// replaced by the environment variable NAME.
	SASLUser, SASLPassword string

	// The keys below apply to the postgres source only (package
	// source/postgres documents them).

	// URL is the source database (YAML "source.url"). Required for
	// postgres.
	URL string
	// PGTables are the tables streamed (YAML "source.tables"), or
	// Publication names an existing publication (YAML
	// "source.publication"); one of them.
	PGTables    []string
	Publication string
	// Slot is the replication slot (YAML "source.slot"); "" means
	// txsink_<pipeline name>.
	Slot string
	// Snapshot is "initial" or "never" (YAML "source.snapshot").
	Snapshot string
}

// FilePartitions returns the partitions of a file source, each an ordered
// list of paths or globs: Paths as one partition, or Partitions.
func (s Source) FilePartitions() [][]string {
	if len(s.Partitions) > 0 {
		return s.Partitions
	}
	if len(s.Paths) > 0 {
		return [][]string{s.Paths}
	}
	return nil
}

// Values of Source.Start.
const (
	// StartEarliest starts a partition with no stored progress at its
	// oldest record.
	StartEarliest = "earliest"
	// StartLatest starts it after its newest record: only what is
	// produced from then on is applied.
	StartLatest = "latest"
)

// Values of Source.Type.
const (
	// SourceFile reads newline-delimited files (source.paths).
	SourceFile = "file"
	// SourceKafka reads Kafka topics with a consumer group.
	SourceKafka = "kafka"
	// SourcePostgres reads a PostgreSQL database by logical replication.
	SourcePostgres = "postgres"
)

// Target says which database the changes are applied to.
type Target struct {
	// URL locates the target database (YAML "target.url"):
	//
	//	mysql://user:pass@host:3306/db[?params]        MySQL, MariaDB
	//	postgres://user:pass@host:5432/db[?params]     PostgreSQL (also postgresql://)
	//	sqlite:///abs/path.db                          SQLite, absolute path
	//	sqlite://rel/path.db                           SQLite, relative to the config file
	//	sqlite::memory:                                SQLite in memory (tests, demos)
	//
	// In the YAML, ${NAME} is replaced by the environment variable NAME so
	// secrets need not be written in the file; inside the user:password part
	// the value is percent-encoded, so any password works. Required.
	//
	// Print URL only through RedactURL (or Target's String method): after
	// expansion it may hold a password.
	URL string
}

// Table routes the changes of one or more source tables to one target table.
type Table struct {
	// Source is a pattern for "namespace.name" as the changelog names the
	// table (YAML "tables[].source"). "*" matches any run of characters and
	// "?" any one character, within the namespace or within the name.
	// Matching ignores case. A pattern without a dot matches tables that
	// have no namespace. Required.
	Source string
	// Target names the target table, "name" or "schema.name" (YAML
	// "tables[].target"): the only way a route leaves the URL's database
	// or schema. Default "": the table of the source table's name (the
	// part after the first dot) in the URL's database or schema, taken
	// whole; Resolve refuses a name that is not one plain identifier, and
	// txsink's own tables whatever the target. Validate refuses a target
	// with a quote, a control character or white space at either end of a
	// part, or one of txsink's own tables, and an entry for one table
	// without target whose name Resolve would refuse. Use Resolve rather
	// than reading it directly.
	Target string
	// PrimaryKey lists the key columns txsink reduces changes by (YAML
	// "tables[].primary-key"). Default empty: the target table's PRIMARY
	// KEY. When set it must agree with the target's key; "txsink check"
	// reports a mismatch.
	PrimaryKey []string
	// AppendOnly declares that the table only ever receives inserts (YAML
	// "tables[].append-only"): rows are written with plain batched INSERTs
	// and need no key, and an update or delete for the table stops the
	// pipeline. Default false. Cannot be combined with PrimaryKey.
	AppendOnly bool
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

// Sink holds the settings of the sink side. The YAML keys are the seed
// connectors' option names without their "sink." prefix (which is accepted
// too), for example "buffer-flush.max-rows".
type Sink struct {
	// FlushMaxRows flushes a table's buffer once it holds this many rows
	// (YAML "buffer-flush.max-rows"). Default 5000; at least 1. In
	// multi-table mode it counts the rows of the finished source
	// transactions not yet committed after per-key reduction, as plain
	// mode counts its buffer (txn.Machine.StepCounted).
	FlushMaxRows int
	// FlushMaxBytes bounds the memory of buffered rows (YAML
	// "buffer-flush.max-bytes"), as reduce.Buffer.Bytes counts it. Default
	// 16 MiB; at least 1. A running pipeline holds the flush it reads and
	// the one it commits, so it flushes at half of it. In multi-table
	// mode it counts the source bytes of finished transactions.
	FlushMaxBytes int64
	// FlushInterval flushes buffered changes at least this often (YAML
	// "buffer-flush.interval" as a Go duration, or "buffer-flush.interval-ms"
	// in milliseconds). Default 1s; 0 disables the timer, so only size
	// limits and shutdown flush.
	FlushInterval time.Duration
	// FlushCoalesce lets a flush that is due while the previous one is
	// still being committed keep taking changes until that commit ends
	// (YAML "buffer-flush.coalesce"). Default true. In plain mode the
	// flush then stops growing at its share of FlushMaxBytes, in
	// multi-table mode at FlushMaxBytes of finished transactions; false
	// makes a due flush wait, reading stopped, so that no commit holds
	// more than FlushMaxRows rows (whole transactions aside).
	FlushCoalesce bool
	// MaxRetries is how many times a transient target error (a lost
	// connection, a deadlock, a serialization failure) is retried before the
	// pipeline stops (YAML "max-retries"). Default 10; 0 retries never.
	MaxRetries int
	// KeyPartitionsRemember is how many key writes a pipeline of more than
	// one partition remembers the partition of, across commits, to stop
	// at a key whose changes come from two partitions (YAML
	// "key-partitions.remember"; see reduce.KeyPartitions). Default
	// 1,000,000 (at most about 32 MB); 0 turns the memory off, leaving
	// the check within one commit; at most reduce.MaxKeyPartitions.
	KeyPartitionsRemember int

	// TxnEnabled turns on multi-table transactions (YAML
	// "transaction.multi-table.enabled"): whole source transactions of
	// several tables are committed atomically. Default false.
	TxnEnabled bool
	// TxnBufferSize bounds the bytes buffered over all tables in
	// multi-table mode; when full, the source waits (YAML
	// "transaction.multi-table.buffer-size"). Default 128 MiB; at least 1.
	TxnBufferSize int64
	// TxnMiniSwitchInterval is the least time between two chunk switches of
	// one partition (YAML "transaction.multi-table.mini-switch-interval-ms"
	// in milliseconds, or "transaction.multi-table.mini-switch-interval" as
	// a duration). MiniSwitchAuto (-1, the default) selects it from
	// FlushInterval; read it through MiniSwitchInterval. Otherwise >= 0.
	TxnMiniSwitchInterval time.Duration
	// TxnMinSwitchBytes is how many bytes a partition's active chunk must
	// hold before a time-triggered switch (YAML
	// "transaction.multi-table.min-switch-bytes"). Default 1 MiB; 0 disables
	// the threshold.
	TxnMinSwitchBytes int64
	// TxnMaxTxnBytes refuses a source transaction whose decoded changes
	// take more memory than this (changelog.Change.MemBytes) with an error,
	// instead of holding it until its end (YAML
	// "transaction.multi-table.max-txn-bytes"). MaxTxnBytesAuto (-1, the
	// default, YAML "auto") makes it TxnBufferSize; read it through
	// MaxTxnBytes. 0 (YAML "unlimited" or 0) refuses none: a transaction is
	// then bounded only by the host's memory, since an unfinished
	// transaction can neither be committed nor dropped to make room.
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
		BadInput: BadInputFail,
		Source:   Source{MaxRecordBytes: 64 << 20},
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
		return line, msg[:m[0]] + msg[m[1]:]
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

// Match returns the first Tables entry whose Source pattern matches t, and
// whether there is one. Matching ignores case (MySQL and SQLite table names
// usually do), and "*" and "?" match within the namespace or the name, never
// across the dot. Match scans the entries in order; callers that route every
// change should remember the answer per table.
func (c *Config) Match(t changelog.Table) (*Table, bool) {
	for i := range c.Tables {
		if c.Tables[i].Matches(t) {
			return &c.Tables[i], true
		}
	}
	return nil, false
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
// "postgres" or "sqlite"; "" when the scheme is not one txsink knows.
func (t Target) Kind() string {
	k, _ := targetKind(t.URL)
	return k
}

// Settings returns the source section's keys by their YAML names, with
// their values (aliases left out): what a source plug-in decodes into its
// own config struct (see package source). Config knows no source; the
// key names are the contract between them.
func (s *Source) Settings() map[string]any {
	out := make(map[string]any, len(sourceSection.keys))
	for _, k := range sourceSection.keys {
		if k.aliasOf != "" {
			continue
		}
		out[k.name] = reflect.ValueOf(k.field(s)).Elem().Interface()
	}
	return out
}
