// Package benchrun is the machinery of `txsink bench`: it generates a
// workload (internal/workload) as Debezium JSON files, has txsink apply it
// to a target through a Pipeline the caller builds with the engine `txsink
// run` uses, checks the target holds exactly the workload's final state,
// and loads the same final rows with the database's own bulk path (LOAD
// DATA LOCAL INFILE, COPY, SQLite's prepared INSERTs) into empty copies of
// the tables, once in one transaction and once cut into as many
// transactions as txsink committed. It reports each figure per round, or
// as the median and range of several rounds.
//
// What it guarantees:
//   - It writes only tables of its own, named for the run
//     (txsink_bench_<run>_*, txsink_bulk_<run>_*), so benches can run side
//     by side against one database and never touch a user's table; it
//     drops them at the end unless Options.Keep, and deletes the progress
//     row it wrote under its own pipeline name; the progress table itself
//     (txsink_progress) it drops when its run created it and no other
//     pipeline's rows are left in it, so the database is left as found.
//   - Every round starts from emptied tables and no progress, so each
//     round's run is the whole workload and each bulk load finds empty
//     tables; a bulk load that does not arrive whole is an error. Under
//     --foreign-keys txsink's tables are made again before every run,
//     with the run's constraints or without.
//   - The final-state check compares digests (a row count and an
//     order-independent hash per table), so a workload too large for
//     memory is still checked row for row.
//   - The report has the same rows, in the same order, whatever the
//     target: a figure that cannot be measured (CPU time, peak RSS, the
//     server's CPU) is said to be unknown or left out, never made up.
//
// The package does not import the engine: the command hands Run an Opener
// that builds each round's pipeline, so the bench measures exactly what
// `txsink run` runs, hooks included.
package benchrun

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/txsink/txsink/internal/redact"
	"github.com/txsink/txsink/sink"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/internal/workload"
	"github.com/txsink/txsink/sink/sqlsink"
)

// prefixes returns the table prefixes of one run: its tables for txsink,
// and their copies for the bulk load, both marked with run.
func prefixes(run string) (bench, bulk string) {
	return "txsink_bench_" + run + "_", "txsink_bulk_" + run + "_"
}

// Options are what a bench runs: the `txsink bench` flags.
type Options struct {
	Workload      string // insert-only, update-heavy or txn
	Orders        int    // orders to generate (update-heavy: hot keys)
	Target        string // target URL; Run needs one
	Partitions    int    // changelog files; 0 takes the workload's default
	ChangesPerKey int    // update-heavy: changes per key
	Mode          string // plain, transaction or both; "" takes the workload's default
	KeyPartitions string // sink key-partitions.remember, "both", or "" for the config's default
	VersionColumn string // "off", "on" (the orders' created_at guards its upserts and deletes) or "both"; "" is off
	ForeignKeys   string // "off", "on" (three levels of tables, with FOREIGN KEY constraints) or "both"; "" is the two tables without notes
	FlushRows     int    // sink buffer-flush.max-rows
	FlushMiB      int    // sink buffer-flush.max-bytes, in MiB
	Dir           string // folder for the changelog files and dumps; Run needs one
	Keep          bool   // keep the bench tables in the target
	Verify        bool   // check the target against the workload's final state
	Rounds        int    // rounds of a txsink run followed by the bulk loads
	Coalesce      bool   // sink buffer-flush.coalesce
	CPUProfile    string // CPU profile of the first round's run, when set
	MemProfile    string // allocations before and after the first round's run, when set
	TraceFile     string // execution trace of the first round's run, when set
}

// UsageError is a mistake in Options, to be fixed on the command line.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Resolve fills in the defaults that depend on the workload (Partitions,
// Mode) and checks every option, returning a *UsageError naming the
// first one that is wrong.
func (o *Options) Resolve() error {
	switch o.Workload {
	case "insert-only", "update-heavy":
		if o.Partitions == 0 {
			o.Partitions = 1
		}
	case "txn":
		if o.Partitions == 0 {
			o.Partitions = 8
		}
	default:
		return &UsageError{fmt.Sprintf("--workload %q: want insert-only, update-heavy or txn", o.Workload)}
	}
	switch o.Mode {
	case "":
		o.Mode = "plain"
		if o.Workload == "txn" {
			o.Mode = "transaction"
		}
	case "plain", "transaction", "both":
	default:
		return &UsageError{fmt.Sprintf("--mode %q: want plain, transaction or both", o.Mode)}
	}
	if o.KeyPartitions != "" && o.KeyPartitions != "both" {
		if n, err := strconv.Atoi(o.KeyPartitions); err != nil || n < 0 {
			return &UsageError{fmt.Sprintf("--key-partitions %q: want a whole number of keys, 0 or more, or both", o.KeyPartitions)}
		}
	}
	switch o.VersionColumn {
	case "", "off", "on", "both":
	default:
		return &UsageError{fmt.Sprintf("--version-column %q: want off, on or both", o.VersionColumn)}
	}
	switch o.ForeignKeys {
	case "":
	case "off", "on", "both":
		if o.Workload == "update-heavy" {
			return &UsageError{"--foreign-keys: the update-heavy workload writes the orders table alone, which references nothing; use txn or insert-only"}
		}
	default:
		return &UsageError{fmt.Sprintf("--foreign-keys %q: want off, on or both", o.ForeignKeys)}
	}
	if o.Orders < 1 || o.Partitions < 1 || o.FlushRows < 1 || o.FlushMiB < 1 || o.Rounds < 1 {
		return &UsageError{"--orders, --partitions, --flush-rows, --flush-mib and --rounds must be at least 1"}
	}
	return nil
}

// Result holds a bench's figures: the workload's, and each round's.
type Result struct {
	opts               *Options
	dialect            string
	prefix, bulkPrefix string // of the run's tables (prefixes)
	events, records    int64  // row changes; all records (BEGIN/END included)
	inputBytes         int64
	txns               int64
	finalRows          int64
	rounds             []round
	profile            string
	memProfile         string
	// server is the target server's process on this host, whose CPU time
	// the bench reads beside its own (FindServer); 0 when unknown.
	server int
}

// tables returns the tables of r's bench, parents first.
func (r *Result) tables() []benchTable { return tablesOf(r.opts) }

// Err returns the first round whose target differed from the workload's
// final state, as an error, or nil when every checked round verified.
func (r *Result) Err() error {
	for _, rr := range r.rounds {
		if rr.verifyErr != "" {
			return fmt.Errorf("round %d, %s mode: the target differs from the workload's final state: %s", rr.round, rr.mode, rr.verifyErr)
		}
	}
	return nil
}

// variant is one way a round runs txsink: its mode,
// sink.key-partitions.remember, whether the orders table has a version
// column (versionColumn), and whether the tables have foreign keys.
type variant struct {
	mode  string
	keys  int
	guard bool
	fks   bool
}

func (v variant) String() string {
	return fmt.Sprintf("%s mode, key-partitions.remember %d, version-column %s, foreign keys %s", v.mode, v.keys, onOff(v.guard), onOff(v.fks))
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// label names v in the bench's output: its mode, its memory of keys'
// partitions when --key-partitions chose it, and its version column when
// --version-column did.
func (v variant) label(o *Options) string {
	s := v.mode + " mode"
	if o.KeyPartitions != "" {
		s += fmt.Sprintf(", key-partitions.remember %d", v.keys)
	}
	if o.VersionColumn != "" {
		s += ", version-column " + onOff(v.guard)
	}
	if o.ForeignKeys != "" {
		s += ", foreign keys " + onOff(v.fks)
	}
	return s
}

// versionColumn is the bench's version column of the orders table under
// --version-column: every change of an order carries it, unchanged, so
// each guarded upsert and delete is applied (equal is not newer) and the
// bench measures what the guard's statements cost.
const versionColumn = "created_at"

// round is one txsink run and the bulk loads after it.
type round struct {
	round int    // from 1
	mode  string // plain or transaction
	keys  int    // sink.key-partitions.remember
	guard bool   // the orders table had its version column
	fks   bool   // the tables had their foreign keys
	run   time.Duration
	cpu   time.Duration // CPU time of the run; -1 when unknown
	// serverCPU and bulkServerCPU are the target server's CPU time during
	// the run and during the bulk load (in one transaction); -1 when
	// unknown.
	serverCPU, bulkServerCPU time.Duration
	upserted, deleted        int64
	inserted, commits        int64
	bulkTook                 time.Duration
	// bulkCommitsTook is the same bulk load cut into as many transactions
	// as the run's commits: the database's own speed at txsink's
	// transaction sizes, the most txsink could reach with them.
	bulkCommitsTook      time.Duration
	peakRSS              int64 // bytes; -1 when unknown
	rssNote              string
	p50, p99, maxLatency time.Duration
	verified             bool
	verifyErr            string
}

// Run runs the bench o describes (o resolved, with Target and Dir set):
// it creates the run's tables, writes the workload into o.Dir, and runs
// o.Rounds rounds, each a txsink run through a pipeline of open's
// followed by the bulk loads. Progress is written to stderr. The tables
// and the progress row are removed however Run ends, unless o.Keep.
func Run(ctx context.Context, o *Options, open Opener, stderr io.Writer) (*Result, error) {
	r := &Result{opts: o}
	s, err := sink.Open(ctx, o.Target, o.Dir)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	tdb, ok := s.(*sqlsink.DB)
	if !ok {
		return nil, fmt.Errorf("target url: txsink bench measures SQL databases (its bulk-load baselines are SQL); %s is not one", redact.URL(o.Target))
	}
	db := tdb.DB()
	r.dialect = tdb.Dialect().Name()
	r.server = FindServer(ctx, db, r.dialect, o.Target)
	schemaDialect := r.dialect
	if schemaDialect == "mariadb" {
		schemaDialect = "mysql"
	}
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	r.prefix, r.bulkPrefix = prefixes(run)
	if !o.Keep {
		defer func() {
			// The run's own tables only.
			if err := dropTables(context.WithoutCancel(ctx), db, r.prefix, r.bulkPrefix); err != nil {
				fmt.Fprintf(stderr, "txsink bench: %v; drop the tables %s* and %s* by hand\n", err, r.prefix, r.bulkPrefix)
			}
		}()
	} else {
		defer fmt.Fprintf(stderr, "txsink bench: kept the tables %s* and %s*\n", r.prefix, r.bulkPrefix)
	}
	createTables := func(prefix string, fks bool) error {
		stmts := workload.LinkedSchema(schemaDialect, prefix, fks)
		if o.ForeignKeys == "" {
			stmts = stmts[:len(tables)]
		}
		for _, st := range stmts {
			if _, err := db.ExecContext(ctx, st); err != nil {
				return fmt.Errorf("create bench table: %w", err)
			}
		}
		return nil
	}
	// The bulk load's copies never have foreign keys: its chunks are cut
	// by rows, not by orders, and its rate stays the one baseline of
	// both variants of --foreign-keys both.
	for _, prefix := range []string{r.prefix, r.bulkPrefix} {
		if err := createTables(prefix, false); err != nil {
			return nil, err
		}
	}

	fmt.Fprintf(stderr, "txsink bench: generating %s workload (%d orders, %s) as Debezium JSON in %s\n", o.Workload, o.Orders, countOf(o.Partitions, "partition"), o.Dir)
	paths, final, err := writeWorkload(o, r)
	if err != nil {
		return nil, err
	}

	cfg := pipelineConfig(o, run, r.prefix, paths)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	modes := variants(o, cfg.Sink.KeyPartitionsRemember)
	// The engine creates the progress table if it is missing: whether it
	// was there decides whether the bench drops it at the end.
	hadProgress, err := tableExists(ctx, db, r.dialect, sqlsink.ProgressTable)
	if err != nil {
		return nil, err
	}
	deleteProgress := func() error {
		// The progress row is the bench's own; leave the table as it was.
		_, err := db.ExecContext(context.WithoutCancel(ctx), "DELETE FROM "+sqlsink.ProgressTable+" WHERE pipeline = "+placeholder1(r.dialect), cfg.Name)
		return err
	}
	defer func() {
		if err := deleteProgress(); err != nil || hadProgress {
			return
		}
		if err := dropIfEmpty(context.WithoutCancel(ctx), db, sqlsink.ProgressTable); err != nil {
			fmt.Fprintf(stderr, "txsink bench: %v; drop the table %s by hand if nothing else uses it\n", err, sqlsink.ProgressTable)
		}
	}()

	var dumps []tableDump // the final rows of each table, for the bulk loads
	defer func() {
		for _, d := range dumps {
			os.Remove(d.path)
		}
	}()
	for i := 1; i <= o.Rounds; i++ {
		for j, v := range roundOrder(modes, i) {
			mode := v.mode
			if i > 1 || j > 0 {
				// Every run starts from empty tables and no progress.
				if err := deleteProgress(); err != nil {
					return nil, fmt.Errorf("reset progress: %w", err)
				}
				if err := emptyTables(ctx, db, r.dialect, r.tables(), r.bulkPrefix); err != nil {
					return nil, err
				}
				if o.ForeignKeys == "" {
					if err := emptyTables(ctx, db, r.dialect, r.tables(), r.prefix); err != nil {
						return nil, err
					}
				}
			}
			if o.ForeignKeys != "" {
				// The tables are made again, with the variant's foreign
				// keys or without: a referenced table cannot be
				// truncated, and SQLite cannot add a constraint later.
				if err := dropTables(ctx, db, r.prefix); err != nil {
					return nil, err
				}
				if err := createTables(r.prefix, v.fks); err != nil {
					return nil, err
				}
			}
			if o.Rounds > 1 || len(modes) > 1 {
				fmt.Fprintf(stderr, "txsink bench: round %d of %d, %s\n", i, o.Rounds, v.label(o))
			}
			cfg.Sink.TxnEnabled = mode == "transaction"
			cfg.Sink.KeyPartitionsRemember = v.keys
			setGuard(&cfg, r.prefix, v.guard)
			rr, err := r.applyRound(ctx, o, open, &cfg, i == 1 && j == 0, stderr)
			if err != nil {
				return nil, err
			}
			rr.round, rr.mode, rr.keys, rr.guard, rr.fks = i, mode, v.keys, v.guard, v.fks
			if o.Verify {
				fmt.Fprintf(stderr, "txsink bench: checking the target against the final state\n")
				if err := r.check(ctx, db, final, &rr); err != nil {
					return nil, err
				}
			}
			if dumps == nil {
				if dumps, err = r.dump(ctx, db); err != nil {
					return nil, err
				}
			}
			fmt.Fprintf(stderr, "txsink bench: loading the same rows with the database's bulk path\n")
			if rr.bulkTook, rr.bulkServerCPU, err = r.bulkLoad(ctx, db, dumps, 1); err != nil {
				return nil, err
			}
			parts := int(max(rr.commits, 1))
			fmt.Fprintf(stderr, "txsink bench: loading them again in %s, as txsink committed them\n", countOf(parts, "transaction"))
			if err := emptyTables(ctx, db, r.dialect, r.tables(), r.bulkPrefix); err != nil {
				return nil, err
			}
			if rr.bulkCommitsTook, _, err = r.bulkLoad(ctx, db, dumps, parts); err != nil {
				return nil, err
			}
			r.rounds = append(r.rounds, rr)
		}
	}
	return r, nil
}

// pipelineConfig is the config of the run's pipeline: the workload's
// files, one partition each, read as Debezium JSON into the run's tables,
// flushed as o says.
func pipelineConfig(o *Options, run, prefix string, paths []string) config.Config {
	cfg := config.Default()
	cfg.Name = "txsink-bench-" + run
	cfg.Source = config.Source{Type: "file", Format: "debezium-json"}
	// Each file is a partition of its own, read concurrently.
	parts := make([][]string, 0, len(paths))
	for _, p := range paths {
		parts = append(parts, []string{p})
	}
	cfg.Source.Set("partitions", parts)
	cfg.Target = config.Target{URL: o.Target}
	for _, t := range tablesOf(o) {
		cfg.Tables = append(cfg.Tables, config.Table{Source: "shop." + t.name, Target: prefix + t.name})
	}
	cfg.Sink.FlushMaxRows = o.FlushRows
	cfg.Sink.FlushMaxBytes = int64(o.FlushMiB) << 20
	cfg.Sink.FlushCoalesce = o.Coalesce
	return cfg
}

// setGuard gives the orders table its version column, or none.
func setGuard(cfg *config.Config, prefix string, on bool) {
	for i := range cfg.Tables {
		if cfg.Tables[i].Target == prefix+"orders" {
			cfg.Tables[i].VersionColumn = ""
			if on {
				cfg.Tables[i].VersionColumn = versionColumn
			}
		}
	}
}

// variants lists the ways each round runs txsink, in the order of odd
// rounds: o's modes, each with the memory of keys' partitions o asks for
// (defaultKeys is the config's default), each with the version columns
// it asks for.
func variants(o *Options, defaultKeys int) []variant {
	keys := []int{defaultKeys}
	switch o.KeyPartitions {
	case "both":
		keys = append(keys, 0)
	case "":
	default:
		keys[0], _ = strconv.Atoi(o.KeyPartitions)
	}
	base := []string{o.Mode}
	if o.Mode == "both" {
		base = []string{"plain", "transaction"}
	}
	guards := onOffs(o.VersionColumn)
	fks := onOffs(o.ForeignKeys)
	var modes []variant
	for _, mode := range base {
		for _, k := range keys {
			for _, g := range guards {
				for _, f := range fks {
					modes = append(modes, variant{mode, k, g, f})
				}
			}
		}
	}
	return modes
}

// onOffs lists the settings an off/on/both flag asks for: "both" is off
// then on, "" off.
func onOffs(flag string) []bool {
	if flag == "both" {
		return []bool{false, true}
	}
	return []bool{flag == "on"}
}

// roundOrder is the order the variants run in round i (from 1): as
// listed in odd rounds, reversed in even ones.
func roundOrder(modes []variant, i int) []variant {
	if len(modes) < 2 || i%2 != 0 {
		return modes
	}
	// The variant that goes second meets a database still busy with the
	// first's run and bulk load (purge, page flushing): over five rounds
	// of the txn workload into MariaDB, its bulk loads ran at 0.89x the
	// first's (medians). Taking turns keeps that out of the comparison.
	order := slices.Clone(modes)
	slices.Reverse(order)
	return order
}

func placeholder1(dialect string) string {
	if dialect == "postgres" {
		return "$1"
	}
	return "?"
}

// check compares the target's bench tables with the workload's final state.
func (r *Result) check(ctx context.Context, db *sql.DB, final workload.Digest, rr *round) error {
	var diffs []string
	for _, t := range r.tables() {
		got, err := workload.ReadDigest(ctx, db, r.prefix+t.name)
		if err != nil {
			return err
		}
		if want := final[t.name]; got != want {
			diffs = append(diffs, fmt.Sprintf("%s has %d rows (digest %x), want %d rows (digest %x)", t.name, got.Rows, got.Sum, want.Rows, want.Sum))
		}
	}
	rr.verified = len(diffs) == 0
	rr.verifyErr = strings.Join(diffs, "; ")
	return nil
}
