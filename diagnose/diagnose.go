// Package diagnose is what "txsink check" runs: it reads a pipeline's
// target catalog, samples its source, and reports what would go wrong (or
// behave surprisingly) once the pipeline runs, each finding with a severity,
// a plain sentence and a fix. It writes nothing: the target is opened with
// sink.OpenReadOnly and every query runs on one connection whose session
// is set read-only (MySQL/MariaDB, PostgreSQL) or opened in mode=ro
// (SQLite).
//
// What txsink run refuses to start with, check reports as an error, with
// a non-zero exit: a missing source file, one it cannot resume at its
// stored progress, a tables entry New refuses (checked by engine.Check
// itself, on check's connection), an unreachable target. Beyond those, it
// looks at:
//
//   - NOT NULL columns without a default (nor generated, auto-increment,
//     identity) that nothing sampled sends: no sampled change writing a
//     row of the table, nor the schema its messages declare (Debezium's
//     Connect envelope, format.ColumnDeclarer); the run's first insert
//     fails there;
//   - key parity: the configured primary-key, the target's PRIMARY KEY and
//     the key columns sampled messages carry (plus a message's own primary
//     key metadata where the format has one: canal-json pkNames,
//     maxwell-json primary_key_columns, ogg-json primary_keys);
//   - column type fits: every sampled value is converted for its column
//     with coerce.Value, exactly as a run would;
//   - triggers and foreign keys on target tables (side effects, and the
//     order of statements within a flush);
//   - UNIQUE indexes besides the primary key;
//   - server timeouts shorter than buffer-flush.interval;
//   - case-insensitive collations on key columns;
//   - signs of a second writer;
//   - for a Kafka source: that the brokers answer and have the topics, and
//     that a transaction topic has one partition;
//   - what a target says of itself (sink.Noter): a StarRocks target's
//     server version and each table's kind (Primary Key, Duplicate Key,
//     Unique Key) and key. Its catalog is StarRocks' information_schema,
//     which has no triggers, foreign keys or timeouts to read.
package diagnose

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/route"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
)

// Severity says how much a finding matters.
type Severity uint8

// The severities, most severe first.
const (
	// Error: the pipeline will stop, or will write wrong data.
	Error Severity = iota
	// Warning: the pipeline may stop or misbehave under some input.
	Warning
	// Info: worth knowing; nothing is wrong.
	Info
)

// String returns "error", "warning" or "info".
func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	case Info:
		return "info"
	}
	return fmt.Sprintf("Severity(%d)", s)
}

// Finding is one thing check reports.
type Finding struct {
	Severity Severity
	// Check names the kind of check that produced it ("key", "value",
	// "unique", "trigger", "foreign-key", "collation", "writer",
	// "timeout", "source", "table", "target"), so tests and tools need not parse
	// sentences.
	Check string
	// Table says what the finding is about: "source -> target" for a
	// table, "target" for the server, a file for the source.
	Table string
	// Message is a plain sentence (or two) saying what is the matter.
	Message string
	// Fix says what to do about it.
	Fix string
}

// String renders the finding as one line:
// "error    shop.orders -> shop.orders: ... Fix: ...".
func (f Finding) String() string {
	return fmt.Sprintf("%-7s  %s: %s Fix: %s", f.Severity, f.Table, f.Message, f.Fix)
}

// Options tunes Run.
type Options struct {
	// Sample is how many records of each source file are read and checked
	// against the target's columns; 0 samples nothing.
	Sample int
	// BaseDir is the folder relative sqlite:// paths and partition names
	// are taken against (the config file's folder).
	BaseDir string
	// ConfigFile is the config's path, for the commands findings suggest
	// (txsink reset --config FILE); "" writes FILE.
	ConfigFile string
}

// DefaultSample is the number of records per file "txsink check" samples
// unless told otherwise.
const DefaultSample = 1000

// Report is what Run found.
type Report struct {
	// Findings in the order they were made: the server first, then each
	// table, then the sample.
	Findings []Finding
	// Tables lists the tables entries' source patterns, sorted.
	Tables []string
	// Records and Changes count what was sampled; Files counts the
	// source files read, Partitions the Kafka partitions found.
	Records, Changes, Files, Partitions int
	// unit and count are what the summary says was sampled: how many of
	// what (the source's source.Sampler says); unit "" counts Files.
	unit  string
	count int
}

// Count returns how many findings have severity s.
func (r *Report) Count(s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// Of returns the findings of the named check.
func (r *Report) Of(check string) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Check == check {
			out = append(out, f)
		}
	}
	return out
}

// Summary is the report's last line. It starts "NAME: configuration OK"
// when there is no error.
func (r *Report) Summary(cfg *config.Config) string {
	var b strings.Builder
	b.WriteString(cfg.Name)
	b.WriteString(": ")
	if r.Count(Error) == 0 {
		b.WriteString("configuration OK; ")
	}
	of := plural(r.Files, "file")
	if r.unit != "" {
		of = plural(r.count, r.unit)
	}
	fmt.Fprintf(&b, "%s, %s, %s; target %s; tables %s; sampled %s (%s) of %s",
		plural(r.Count(Error), "error"), plural(r.Count(Warning), "warning"), plural(r.Count(Info), "info"),
		cfg.Target.String(), strings.Join(r.Tables, ", "), plural(r.Records, "record"), plural(r.Changes, "change"), of)
	return b.String()
}

// plural writes n of what, singular for one: "1 record", "2 records";
// "info" is uncountable.
func plural(n int, what string) string {
	if n == 1 || what == "info" {
		return fmt.Sprintf("%d %s", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Run checks cfg against its target and source. An error means it could
// not check at all (the target cannot be opened, a catalog query failed);
// everything it could judge is a Finding.
func Run(ctx context.Context, cfg *config.Config, opts Options) (*Report, error) {
	db, err := sink.OpenReadOnly(ctx, cfg.Target.URL, opts.BaseDir)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	cat, ok := db.(sink.Catalog)
	if !ok {
		return nil, fmt.Errorf("target url: txsink check reads the target's catalog through SQL, and this target (%T) has none", db)
	}
	conn, err := readOnlyConn(ctx, cat)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	c := &checker{
		cfg:      cfg,
		opts:     opts,
		db:       db,
		cat:      cat,
		q:        conn,
		report:   &Report{},
		tables:   map[schema.Name]*tableInfo{},
		problems: map[string]*problem{},
		router:   route.New(cfg),
	}
	for _, t := range cfg.Tables {
		c.report.Tables = append(c.report.Tables, t.Source)
	}
	sort.Strings(c.report.Tables)
	if err := c.run(ctx); err != nil {
		return nil, err
	}
	return c.report, nil
}

// readOnlyConn pins one connection and makes its session read-only, so
// that nothing check runs can write, whatever a catalog query does.
// SQLite's check handle is opened with mode=ro already.
func readOnlyConn(ctx context.Context, db sink.Catalog) (*sql.Conn, error) {
	conn, err := db.DB().Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	var stmt string
	switch db.DialectName() {
	case "mysql", "mariadb":
		stmt = "SET SESSION TRANSACTION READ ONLY"
	case "postgres":
		stmt = "SET default_transaction_read_only = on"
	}
	if stmt != "" {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			conn.Close()
			return nil, fmt.Errorf("make the session read-only: %w", err)
		}
	}
	return conn, nil
}

// checker holds one Run's state.
type checker struct {
	cfg    *config.Config
	opts   Options
	db     sink.Sink
	cat    sink.Catalog // db's catalog
	q      sink.Querier
	report *Report
	// router routes sampled changes as a run routes them.
	router *route.Router
	// tables caches each target table by the name its tables entry
	// resolves to, so each is described and judged once.
	tables map[schema.Name]*tableInfo
	// narrower is the sample's decoder when it reads an update's before
	// image for the key alone, narrowed the source tables told it (see
	// narrow.go).
	narrower format.BeforeNarrower
	narrowed map[changelog.Table]bool
	// pendingCreate holds the missing tables schema.create: missing
	// creates that no sampled change has reached yet, with their labels.
	pendingCreate map[schema.Name]string
	// progress is this pipeline's committed positions, by partition;
	// progressTable says whether txsink_progress exists at all. stored
	// is the pipeline's rows with their marks, for checkSources.
	progress      map[string]int64
	progressTable bool
	stored        []sink.Stored
	// refusedParts holds the source partitions run would refuse to
	// start with (checkSources): they are not sampled.
	refusedParts map[string]bool
	// problems aggregates what the sample shows, one finding per kind of
	// problem and place (see sample.go), in the order first seen.
	problems     map[string]*problem
	problemOrder []string
	// childFKs are the target tables' own foreign keys, judged once the
	// sample has resolved every table the pipeline writes.
	childFKs []childFK
	// heldRows names the tables that hold rows though the pipeline has
	// committed nothing (checkWriter), reported in one finding.
	heldRows []string
}

func (c *checker) add(f Finding) { c.report.Findings = append(c.report.Findings, f) }

// addNotes reports a target's own notes (sink.Noter) about what, as
// findings of the check "target".
func (c *checker) addNotes(what string, notes []sink.Note) {
	for _, n := range notes {
		sev := Info
		if n.Warning {
			sev = Warning
		}
		c.add(Finding{Severity: sev, Check: "target", Table: what, Message: n.Message, Fix: n.Fix})
	}
}

func (c *checker) run(ctx context.Context) error {
	if err := c.readProgress(ctx); err != nil {
		return err
	}
	if err := c.checkTimeouts(ctx); err != nil {
		return err
	}
	if n, ok := c.db.(sink.Noter); ok {
		c.addNotes("target", n.ServerNotes())
	}
	for i := range c.cfg.Tables {
		tc := &c.cfg.Tables[i]
		if !route.Known(tc) {
			// Which tables it names is known only from changes; the
			// sample resolves those it sees.
			continue
		}
		src, name, err := route.Entry(tc)
		if err != nil {
			c.add(routeFinding(Error, src, err)) // run refuses it at start-up
			continue
		}
		if _, err := c.table(ctx, tc, src, name, nil); err != nil {
			return err
		}
	}
	if err := c.checkAsRun(ctx); err != nil {
		return err
	}
	if err := c.checkSources(ctx); err != nil {
		return err
	}
	if err := c.sample(ctx); err != nil {
		return err
	}
	c.emitPendingCreates()
	c.checkChildForeignKeys()
	c.emitHeldRows()
	c.emitProblems()
	c.checkNotNull()
	return nil
}

// checkAsRun resolves the tables entries as txsink run does before it
// reads anything (engine.Check, on check's read-only connection), and
// reports as errors the refusals the findings so far do not name: what
// run refuses to start with, check must not pass, whatever the reason
// (a route to one of txsink's own tables, say).
func (c *checker) checkAsRun(ctx context.Context) error {
	err := engine.Check(ctx, c.cfg, engine.WithTarget(c.db), engine.WithCatalog(c.q), engine.WithBaseDir(c.opts.BaseDir))
	if err == nil {
		return nil
	}
	for _, err := range joined(err) {
		var te *engine.TableError
		var se *engine.SchemaError
		if errors.As(err, &se) && se.Table == "" {
			c.add(Finding{Severity: Error, Check: "schema", Table: "source", Message: se.Reason + ".", Fix: se.Hint})
			continue
		}
		var tre *engine.TruncateError
		if errors.As(err, &tre) {
			c.add(Finding{Severity: Error, Check: "source", Table: "source", Message: "txsink run refuses to start: " + tre.Reason + ".", Fix: tre.Hint})
			continue
		}
		if !errors.As(err, &te) {
			return fmt.Errorf("resolve the tables entries: %w", err)
		}
		if c.refused(&c.cfg.Tables[te.Index]) {
			continue
		}
		c.add(Finding{Severity: Error, Check: "table", Table: fmt.Sprintf("tables[%d] (%s)", te.Index, te.Source),
			Message: fmt.Sprintf("txsink run refuses to start: %v.", te.Err),
			Fix:     "correct the tables entry, or the target table it names"})
	}
	return nil
}

// checkSources opens the source's file partitions as txsink run does, at
// their stored positions verified against their marks
// (engine.CheckSources), and reports each refusal as an error.
func (c *checker) checkSources(ctx context.Context) error {
	c.refusedParts = map[string]bool{}
	err := engine.CheckSources(ctx, c.cfg, c.stored, engine.WithBaseDir(c.opts.BaseDir), engine.WithConfigFile(c.opts.ConfigFile))
	if err == nil {
		return nil
	}
	for _, err := range joined(err) {
		// Each is a refusal to start (an engine.SourceError), naming
		// its partition; its message is the source's own.
		w, ok := errkind.WhereOf(err)
		if !ok || errkind.Of(err) != errkind.Permanent {
			return err
		}
		part := w.Pos.Partition
		where := part
		if where == "" {
			where = "source"
		}
		c.refusedParts[part] = true
		c.add(Finding{Severity: Error, Check: "source", Table: where,
			Message: fmt.Sprintf("txsink run refuses to start: %v.", err),
			Fix:     "see the message; nothing of this partition is sampled"})
	}
	return nil
}

// joined returns the errors errors.Join joined into err, or err alone.
func joined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// refused reports whether entry tc is reported already as one run would
// refuse: its route (routeFinding), or its table.
func (c *checker) refused(tc *config.Table) bool {
	if _, _, err := route.Entry(tc); err != nil {
		return true
	}
	for _, ti := range c.tables {
		if ti.entry == tc && !ti.ok {
			return true
		}
	}
	return false
}

// checkTimeouts compares the server's timeouts with the commit interval.
func (c *checker) checkTimeouts(ctx context.Context) error {
	interval := c.cfg.Sink.FlushInterval
	if interval <= 0 {
		return nil
	}
	ts, err := serverTimeouts(ctx, c.q, c.cat.DialectName())
	if err != nil {
		return fmt.Errorf("read the server's timeouts: %w", err)
	}
	for _, t := range ts {
		if t.value <= 0 || t.value >= interval {
			continue
		}
		msg, fix := timeoutAdvice(t, interval, c.cfg.Sink.TxnEnabled)
		if msg == "" {
			continue
		}
		c.add(Finding{Severity: Warning, Check: "timeout", Table: "target", Message: msg, Fix: fix})
	}
	return nil
}

// timeoutAdvice explains why timeout t, shorter than the commit interval,
// matters; "" when it does not in this mode.
func timeoutAdvice(t timeout, interval time.Duration, txnMode bool) (msg, fix string) {
	set := fmt.Sprintf("raise %s above buffer-flush.interval (%s) for txsink's user (in the URL's parameters or with ALTER USER/ROLE ... SET), or lower buffer-flush.interval", t.name, interval)
	switch t.name {
	case "wait_timeout":
		return fmt.Sprintf("wait_timeout is %s, shorter than buffer-flush.interval (%s): the server closes txsink's connection while it waits between commits, so commits keep starting on dead connections and fall back to reconnecting and retrying.", t.value, interval), set
	case "innodb_lock_wait_timeout", "lock_timeout":
		if !txnMode {
			return "", ""
		}
		return fmt.Sprintf("%s is %s, shorter than buffer-flush.interval (%s): in transaction mode a commit carries a whole interval of source transactions and holds its row locks until COMMIT, so a commit that waits behind another writer's (or another pipeline's) commit of the same size times out and is retried, and may exhaust max-retries.", t.name, t.value, interval), set
	case "statement_timeout":
		if !txnMode {
			return "", ""
		}
		return fmt.Sprintf("statement_timeout is %s, shorter than buffer-flush.interval (%s): in transaction mode one statement can write a whole interval's worth of rows of a table, and a statement cancelled by the timeout fails the commit again on every retry.", t.value, interval), set
	case "idle_in_transaction_session_timeout":
		return fmt.Sprintf("idle_in_transaction_session_timeout is %s, shorter than buffer-flush.interval (%s). txsink sends a commit's statements back to back and never leaves a transaction open between commits, so only a client stall in the middle of a commit (a slow network, a paused process) trips it; the commit is then retried whole.", t.value, interval), set
	}
	return "", ""
}

// readProgress reads the pipeline's committed positions, and reports
// other pipelines that commit into this target.
func (c *checker) readProgress(ctx context.Context) error {
	d := c.cat
	c.progress = map[string]int64{}
	if _, err := d.DescribeOn(ctx, c.q, schema.Name{Name: sink.ProgressTable}); err != nil {
		return nil // no progress table: nothing was ever committed here
	}
	c.progressTable = true
	q := "SELECT " + d.Quote("pipeline") + ", " + d.Quote("source_partition") + ", " + d.Quote("position") + " FROM " + d.Quote(sink.ProgressTable)
	rows, err := c.q.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("read %s: %w", sink.ProgressTable, err)
	}
	defer rows.Close()
	others := map[string]bool{}
	for rows.Next() {
		var pipeline, part string
		var pos int64
		if err := rows.Scan(&pipeline, &part, &pos); err != nil {
			return fmt.Errorf("read %s: %w", sink.ProgressTable, err)
		}
		switch {
		case pipeline == c.cfg.Name:
			c.progress[part] = pos
		case pos > 0:
			// A pipeline that claimed its partitions but committed
			// nothing has written nothing here.
			others[pipeline] = true
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read %s: %w", sink.ProgressTable, err)
	}
	// The rows again with their marks, to verify the positions as a run
	// does. A progress table of an older txsink has no mark column until
	// a run adds it: its positions are then checked as a run checks
	// positions without a mark.
	if c.stored, err = c.cat.StoredOn(ctx, c.q, c.cfg.Name); err != nil {
		c.stored = nil
		for part, pos := range c.progress {
			c.stored = append(c.stored, sink.Stored{Position: changelog.Position{Partition: part, Offset: pos}})
		}
	}
	if len(others) > 0 {
		names := make([]string, 0, len(others))
		for n := range others {
			names = append(names, n)
		}
		sort.Strings(names)
		c.add(Finding{Severity: Info, Check: "writer", Table: "target",
			Message: fmt.Sprintf("other pipelines have committed into this target too (%s); if two write the same table and key, the later commit wins, whatever the sources' order.", strings.Join(names, ", ")),
			Fix:     "give each target table a single pipeline, or make the pipelines write disjoint keys"})
	}
	return nil
}

// committed reports whether this pipeline has committed anything.
func (c *checker) committed() bool {
	for _, pos := range c.progress {
		if pos > 0 {
			return true
		}
	}
	return false
}
