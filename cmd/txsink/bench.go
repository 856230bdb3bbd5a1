package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	mysqldrv "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/bulktext"
	"github.com/txsink/txsink/internal/cputime"
	"github.com/txsink/txsink/internal/workload"
	"github.com/txsink/txsink/metrics"
	"github.com/txsink/txsink/target/connect"
)

// benchTables are the workload tables the bench writes, each created with
// a prefix of the run's own in the target (see benchPrefixes), so it never
// touches tables of the user's, nor those of another bench running against
// the same database.
var benchTables = []struct{ name, order string }{
	{"orders", "id"},
	{"order_items", "order_id, line_no"},
}

// benchPrefixes returns the table prefixes of one run: its tables for
// txsink, and their copies for the bulk load, both marked with run.
func benchPrefixes(run string) (bench, bulk string) {
	return "txsink_bench_" + run + "_", "txsink_bulk_" + run + "_"
}

// benchOptions are the bench command's flags.
type benchOptions struct {
	workload      string
	orders        int
	target        string
	partitions    int
	changesPerKey int
	mode          string
	keyPartitions string
	flushRows     int
	flushMiB      int
	dir           string
	keep          bool
	verify        bool
	rounds        int
	coalesce      bool
	cpuProfile    string
	memProfile    string
	traceFile     string
}

func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench", `txsink bench [--workload insert-only|update-heavy|txn] [--orders N] [--target URL]

Generates a workload as Debezium JSON files, applies it with the same engine
'txsink run' uses (decoding included), then loads the same final rows with the
database's own bulk path (MariaDB/MySQL LOAD DATA LOCAL INFILE, PostgreSQL
COPY, SQLite one transaction of prepared INSERTs) into empty copies of the
tables, and loads them once more cut into as many transactions as txsink
committed (the database's own speed at txsink's transaction sizes, the most
txsink could reach with them). It prints: input events/s, rows written/s,
bulk rows/s of both loads and the ratios, txsink's CPU time (a steadier
figure than wall time on a shared machine), peak RSS of the run, commits and
commit latency p50/p99. It also checks the target holds exactly the
workload's final state. When the server runs on this host (a loopback
address, localhost or a socket) and its process can be found (Linux), it
also prints the server's CPU time during txsink's run and during the bulk
load: the cores it used in each show whether txsink's run left it the
cores it had alone.

The machine's speed drifts (a shared host): --rounds N repeats the txsink run
and the bulk load N times, each round into emptied tables, and reports each
figure as the median of the rounds with its range; a round's ratio compares
its txsink run with the bulk load right after it. --mode both runs plain
mode and transaction mode one after the other in each round, taking turns
to go first (plain mode in odd rounds: the database may still be busy with
the run before), and compares their events/s round by round.
--key-partitions both does the same with sink.key-partitions.remember at its
default and at 0 (the memory of keys' partitions on and off): what the
check that one key's changes stay in one partition costs.

Workloads:
  insert-only   orders with 1-5 items, one source transaction each
  update-heavy  --orders hot keys of orders, each changed --changes-per-key
                times (>= 10), about 5% deletes; each change a transaction
  txn           the orders lifecycle (items, status updates, multi-table
                quantity changes, cancellations) over --partitions (default
                8), in transaction mode (sink.transaction.multi-table.enabled)

The bench creates its own tables in the target, named for the run
(txsink_bench_<run>_*, txsink_bulk_<run>_*) so that benches can run side by
side, and drops them at the end (--keep leaves them); it writes progress
rows under a pipeline name of its own, and removes them.

Examples:
  txsink bench --workload insert-only --orders 1000000 --target 'mysql://txsink:txsink@127.0.0.1:3306/test'
  txsink bench --workload update-heavy --orders 20000 --target 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable'
  txsink bench --workload txn --orders 2000`, stderr)
	var o benchOptions
	fs.StringVar(&o.workload, "workload", "insert-only", "insert-only, update-heavy or txn")
	fs.IntVar(&o.orders, "orders", 100000, "orders to generate (update-heavy: hot keys)")
	fs.StringVar(&o.target, "target", "", "target URL (mysql://, postgres://, sqlite://); default: a SQLite file in --dir")
	fs.IntVar(&o.partitions, "partitions", 0, "changelog files the workload is spread over (default 1; txn: 8)")
	fs.IntVar(&o.changesPerKey, "changes-per-key", 12, "update-heavy: changes per key (at least 10)")
	fs.StringVar(&o.mode, "mode", "", "plain, transaction, or both: each round then runs plain mode and transaction mode, one after the other, plain mode first in odd rounds (default: transaction for txn, plain otherwise)")
	fs.StringVar(&o.keyPartitions, "key-partitions", "", "sink key-partitions.remember, or both: each round then runs with the default and with 0, taking turns to go first (default: the config's default)")
	fs.IntVar(&o.flushRows, "flush-rows", 5000, "sink buffer-flush.max-rows")
	fs.IntVar(&o.flushMiB, "flush-mib", 16, "sink buffer-flush.max-bytes, in MiB (txsink run's memory limit follows it)")
	fs.StringVar(&o.dir, "dir", "", "folder for the changelog files (default: a temporary folder, removed afterwards)")
	fs.BoolVar(&o.keep, "keep", false, "keep the bench tables in the target")
	fs.BoolVar(&o.verify, "verify", true, "check the target against the workload's final state")
	fs.BoolVar(&o.coalesce, "coalesce", true, "sink buffer-flush.coalesce")
	fs.IntVar(&o.rounds, "rounds", 1, "rounds of a txsink run followed by the bulk load, each into emptied tables; the figures are then medians with their ranges")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the txsink run to this file (the first round's)")
	fs.StringVar(&o.traceFile, "trace", "", "write an execution trace of the first round's txsink run to this file (go tool trace F): where its goroutines wait")
	fs.StringVar(&o.memProfile, "memprofile", "", "write the allocations of the process to this file after the first round's txsink run, and to this file + \".before\" before it (go tool pprof -sample_index=alloc_space -diff_base F.before F)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch o.workload {
	case "insert-only", "update-heavy":
		if o.partitions == 0 {
			o.partitions = 1
		}
	case "txn":
		if o.partitions == 0 {
			o.partitions = 8
		}
	default:
		return usageError{msg: fmt.Sprintf("--workload %q: want insert-only, update-heavy or txn", o.workload)}
	}
	switch o.mode {
	case "":
		o.mode = "plain"
		if o.workload == "txn" {
			o.mode = "transaction"
		}
	case "plain", "transaction", "both":
	default:
		return usageError{msg: fmt.Sprintf("--mode %q: want plain, transaction or both", o.mode)}
	}
	if o.keyPartitions != "" && o.keyPartitions != "both" {
		if n, err := strconv.Atoi(o.keyPartitions); err != nil || n < 0 {
			return usageError{msg: fmt.Sprintf("--key-partitions %q: want a whole number of keys, 0 or more, or both", o.keyPartitions)}
		}
	}
	if o.orders < 1 || o.partitions < 1 || o.flushRows < 1 || o.flushMiB < 1 || o.rounds < 1 {
		return usageError{msg: "--orders, --partitions, --flush-rows, --flush-mib and --rounds must be at least 1"}
	}
	if o.dir == "" {
		d, err := os.MkdirTemp("", "txsink-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		o.dir = d
	} else if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	if o.target == "" {
		o.target = "sqlite://" + filepath.Join(o.dir, "bench.db")
	}
	r, err := runBench(ctx, &o, stderr)
	if err != nil {
		return err
	}
	r.print(stdout)
	for _, rr := range r.rounds {
		if rr.verifyErr != "" {
			return fmt.Errorf("round %d, %s mode: the target differs from the workload's final state: %s", rr.round, rr.mode, rr.verifyErr)
		}
	}
	return nil
}

// benchResult holds a bench's figures: the workload's, and each round's.
type benchResult struct {
	opts               *benchOptions
	dialect            string
	prefix, bulkPrefix string // of the run's tables (benchPrefixes)
	events, records    int64  // row changes; all records (BEGIN/END included)
	inputBytes         int64
	txns               int64
	finalRows          int64
	rounds             []benchRound
	profile            string
	memProfile         string
	// server is the target server's process on this host, whose CPU time
	// the bench reads beside its own (benchServer); 0 when unknown.
	server int
}

// benchVariant is one way a round runs txsink: its mode, and
// sink.key-partitions.remember.
type benchVariant struct {
	mode string
	keys int
}

func (v benchVariant) String() string {
	return fmt.Sprintf("%s mode, key-partitions.remember %d", v.mode, v.keys)
}

// label names v in the bench's output: its mode, and its memory of
// keys' partitions when --key-partitions chose it.
func (v benchVariant) label(o *benchOptions) string {
	if o.keyPartitions == "" {
		return v.mode + " mode"
	}
	return v.String()
}

// benchRound is one txsink run and the bulk load after it.
type benchRound struct {
	round int    // from 1
	mode  string // plain or transaction
	keys  int    // sink.key-partitions.remember
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

func runBench(ctx context.Context, o *benchOptions, stderr io.Writer) (*benchResult, error) {
	r := &benchResult{opts: o}
	tdb, err := connect.Open(ctx, o.target, o.dir)
	if err != nil {
		return nil, err
	}
	defer tdb.Close()
	db := tdb.DB()
	r.dialect = tdb.Dialect().Name()
	r.server = benchServer(ctx, db, r.dialect, o.target)
	schemaDialect := r.dialect
	if schemaDialect == "mariadb" {
		schemaDialect = "mysql"
	}
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	r.prefix, r.bulkPrefix = benchPrefixes(run)
	if !o.keep {
		defer func() {
			// The run's own tables only.
			if err := dropBenchTables(context.WithoutCancel(ctx), db, r.prefix, r.bulkPrefix); err != nil {
				fmt.Fprintf(stderr, "txsink bench: %v; drop the tables %s* and %s* by hand\n", err, r.prefix, r.bulkPrefix)
			}
		}()
	} else {
		defer fmt.Fprintf(stderr, "txsink bench: kept the tables %s* and %s*\n", r.prefix, r.bulkPrefix)
	}
	for _, prefix := range []string{r.prefix, r.bulkPrefix} {
		for _, st := range workload.SchemaPrefixed(schemaDialect, prefix) {
			if strings.Contains(st, prefix+"order_events") {
				continue
			}
			if _, err := db.ExecContext(ctx, st); err != nil {
				return nil, fmt.Errorf("create bench table: %w", err)
			}
		}
	}

	fmt.Fprintf(stderr, "txsink bench: generating %s workload (%d orders, %s) as Debezium JSON in %s\n", o.workload, o.orders, countOf(o.partitions, "partition"), o.dir)
	paths, final, err := writeBenchWorkload(o, r)
	if err != nil {
		return nil, err
	}

	cfg := config.Default()
	cfg.Name = "txsink-bench-" + run
	cfg.Source = config.Source{Type: "file", Format: "debezium-json"}
	for _, p := range paths {
		// Each file is a partition of its own, read concurrently.
		cfg.Source.Partitions = append(cfg.Source.Partitions, []string{p})
	}
	cfg.Target = config.Target{URL: o.target}
	for _, t := range benchTables {
		cfg.Tables = append(cfg.Tables, config.Table{Source: "shop." + t.name, Target: r.prefix + t.name})
	}
	cfg.Sink.FlushMaxRows = o.flushRows
	cfg.Sink.FlushMaxBytes = int64(o.flushMiB) << 20
	cfg.Sink.FlushCoalesce = o.coalesce
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	keys := []int{cfg.Sink.KeyPartitionsRemember}
	switch o.keyPartitions {
	case "both":
		keys = append(keys, 0)
	case "":
	default:
		keys[0], _ = strconv.Atoi(o.keyPartitions)
	}
	base := []string{o.mode}
	if o.mode == "both" {
		base = []string{"plain", "transaction"}
	}
	var modes []benchVariant
	for _, mode := range base {
		for _, k := range keys {
			modes = append(modes, benchVariant{mode, k})
		}
	}
	deleteProgress := func() error {
		// The progress row is the bench's own; leave the table as it was.
		_, err := db.ExecContext(context.WithoutCancel(ctx), "DELETE FROM txsink_progress WHERE pipeline = "+placeholder1(r.dialect), cfg.Name)
		return err
	}
	defer func() { _ = deleteProgress() }()

	var dumps []benchDump // the final rows of each table, for the bulk loads
	defer func() {
		for _, d := range dumps {
			os.Remove(d.path)
		}
	}()
	for i := 1; i <= o.rounds; i++ {
		order := modes
		if len(modes) > 1 && i%2 == 0 {
			// The mode that goes second meets a database still busy with
			// the first's run and bulk load (purge, page flushing): over
			// five rounds of the txn workload into MariaDB, its bulk
			// loads ran at 0.89x the first's (medians). Taking turns
			// keeps that out of the comparison.
			order = slices.Clone(modes)
			slices.Reverse(order)
		}
		for j, v := range order {
			mode := v.mode
			if i > 1 || j > 0 {
				// Every run starts from empty tables and no progress.
				if err := deleteProgress(); err != nil {
					return nil, fmt.Errorf("reset progress: %w", err)
				}
				if err := emptyBenchTables(ctx, db, r.dialect, r.prefix, r.bulkPrefix); err != nil {
					return nil, err
				}
			}
			if o.rounds > 1 || len(modes) > 1 {
				fmt.Fprintf(stderr, "txsink bench: round %d of %d, %s\n", i, o.rounds, v.label(o))
			}
			cfg.Sink.TxnEnabled = mode == "transaction"
			cfg.Sink.KeyPartitionsRemember = v.keys
			tuneGC(&cfg) // as txsink run does
			rr, err := r.applyRound(ctx, o, &cfg, i == 1 && j == 0, stderr)
			if err != nil {
				return nil, err
			}
			rr.round, rr.mode, rr.keys = i, mode, v.keys
			if o.verify {
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
			if err := emptyBenchTables(ctx, db, r.dialect, r.bulkPrefix); err != nil {
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

// applyRound runs txsink once over the workload, with the engine txsink run
// uses and the hooks it installs, and returns the round's figures.
func (r *benchResult) applyRound(ctx context.Context, o *benchOptions, cfg *config.Config, first bool, stderr io.Writer) (benchRound, error) {
	rr := benchRound{peakRSS: -1, serverCPU: -1, bulkServerCPU: -1}
	lat := &latencyHook{}
	// The metrics are the hooks txsink run installs: they count every
	// change, so the bench pays for them too.
	e, err := engine.New(ctx, cfg, engine.WithBaseDir(o.dir), engine.WithHooks(metrics.New(cfg), lat))
	if err != nil {
		return rr, err
	}
	defer e.Close()
	// The generator's memory (or the last round's) is garbage now; return
	// it to the system and restart the high-water mark, so peak RSS is
	// the run's own.
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		rr.rssNote = "whole process, generation included: could not reset the high-water mark (" + err.Error() + ")"
	}
	if o.cpuProfile != "" && first {
		stop, err := startWriting(o.cpuProfile, "cpu profile", pprof.StartCPUProfile, pprof.StopCPUProfile)
		if err != nil {
			return rr, err
		}
		defer stop()
		r.profile = o.cpuProfile
	}
	if o.traceFile != "" && first {
		stop, err := startWriting(o.traceFile, "trace", trace.Start, trace.Stop)
		if err != nil {
			return rr, err
		}
		defer stop()
	}
	if o.memProfile != "" && first {
		if err := writeAllocs(o.memProfile + ".before"); err != nil {
			return rr, err
		}
		r.memProfile = o.memProfile
	}
	fmt.Fprintf(stderr, "txsink bench: applying %d events to %s\n", r.events, cfg.Target.String())
	cpu0, cpuOK := cputime.Process()
	server0, serverOK := r.serverCPU()
	start := time.Now()
	runErr := e.Run(ctx, engine.RunOptions{})
	rr.run = time.Since(start)
	rr.cpu = -1
	if cpu1, ok := cputime.Process(); ok && cpuOK {
		rr.cpu = cpu1 - cpu0
	}
	if server1, ok := r.serverCPU(); ok && serverOK {
		rr.serverCPU = server1 - server0
	}
	if runErr != nil {
		return rr, runErr
	}
	if o.memProfile != "" && first {
		if err := writeAllocs(o.memProfile); err != nil {
			return rr, err
		}
	}
	rr.peakRSS = peakRSS()
	st := e.Stats()
	var events int64
	for k, n := range st.Events {
		if k != changelog.EndTxn {
			events += n
		}
	}
	if events != r.events {
		return rr, fmt.Errorf("the engine read %d events, the workload has %d", events, r.events)
	}
	rr.upserted, rr.deleted, rr.inserted, rr.commits = st.Upserted, st.Deleted, st.Inserted, st.Commits
	rr.p50, rr.p99, rr.maxLatency = lat.percentiles()
	return rr, nil
}

// emptyBenchTables deletes every row of the bench's tables.
func emptyBenchTables(ctx context.Context, db *sql.DB, dialect string, prefixes ...string) error {
	stmt := "TRUNCATE TABLE "
	if dialect == "sqlite" {
		stmt = "DELETE FROM "
	}
	return onBenchTables(ctx, db, "empty", stmt, prefixes)
}

// onBenchTables runs stmt followed by the name of each bench table of each
// prefix; what names the work in an error.
func onBenchTables(ctx context.Context, db *sql.DB, what, stmt string, prefixes []string) error {
	for _, prefix := range prefixes {
		for _, t := range benchTables {
			if _, err := db.ExecContext(ctx, stmt+prefix+t.name); err != nil {
				return fmt.Errorf("%s bench table %s: %w", what, prefix+t.name, err)
			}
		}
	}
	return nil
}

// writeBenchWorkload generates the workload into one Debezium JSON file per
// partition and returns their paths and the final state's digest.
func writeBenchWorkload(o *benchOptions, r *benchResult) ([]string, workload.Digest, error) {
	w := &debeziumWriter{}
	var paths []string
	for p := 0; p < o.partitions; p++ {
		path := filepath.Join(o.dir, fmt.Sprintf("p%d.json", p))
		f, err := os.Create(path)
		if err != nil {
			return nil, nil, err
		}
		defer f.Close()
		w.files = append(w.files, f)
		w.out = append(w.out, bufio.NewWriterSize(f, 1<<20))
		paths = append(paths, path)
	}
	var final workload.Digest
	switch o.workload {
	case "insert-only":
		s, err := workload.InsertOnly(o.orders, o.partitions, 1, w.txn)
		if err != nil {
			return nil, nil, err
		}
		final = s.Final
	case "update-heavy":
		s, err := workload.HotKeys(o.orders, o.changesPerKey, o.partitions, 1, w.txn)
		if err != nil {
			return nil, nil, err
		}
		final = s.Final
	case "txn":
		res := workload.Generate(workload.Spec{Orders: o.orders, Partitions: o.partitions, Seed: 1})
		for p, changes := range res.Partitions {
			start := 0
			for i := range changes {
				if changes[i].TxnEnd {
					if err := w.txn(p, changes[start:i+1]); err != nil {
						return nil, nil, err
					}
					start = i + 1
				}
			}
		}
		final = workload.DigestOf(res.Final)
	}
	for i, b := range w.out {
		if err := b.Flush(); err != nil {
			return nil, nil, err
		}
		if err := w.files[i].Close(); err != nil {
			return nil, nil, err
		}
	}
	r.events, r.records, r.inputBytes, r.txns = w.events, w.records, w.bytes, w.txns
	return paths, final, nil
}

// debeziumWriter writes source transactions as Debezium JSON records, one
// per line, the way the MySQL connector writes them with
// provide.transaction.metadata: BEGIN, the row events (an update is one
// "u" event with before and after, so -U changes are not written), END with
// the event count.
type debeziumWriter struct {
	files                  []*os.File
	out                    []*bufio.Writer
	buf                    []byte
	events, records, bytes int64
	txns                   int64
}

func (w *debeziumWriter) txn(p int, txn []changelog.Change) error {
	id := txn[0].TxnID
	b := w.buf[:0]
	b = append(b, `{"status":"BEGIN","id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"event_count":null,"data_collections":null,"ts_ms":1767225600000}`+"\n"...)
	n := 0
	for i := range txn {
		c := &txn[i]
		if c.Kind == changelog.UpdateBefore {
			continue
		}
		n++
		b = appendDebezium(b, c, id, n)
	}
	b = append(b, `{"status":"END","id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"event_count":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, `,"data_collections":null,"ts_ms":1767225600000}`+"\n"...)
	w.buf = b
	w.events += int64(n)
	w.records += int64(n + 2)
	w.bytes += int64(len(b))
	w.txns++
	_, err := w.out[p].Write(b)
	return err
}

// appendDebezium appends one change as a bare Debezium envelope (the
// JsonConverter with schemas.enable=false).
func appendDebezium(b []byte, c *changelog.Change, txnID string, order int) []byte {
	op := "c"
	switch c.Kind {
	case changelog.UpdateAfter:
		op = "u"
	case changelog.Delete:
		op = "d"
	}
	b = append(b, `{"before":`...)
	if c.Kind == changelog.Insert || c.Before.IsZero() {
		b = append(b, "null"...)
	} else {
		b = appendJSONRow(b, c.Before)
	}
	b = append(b, `,"after":`...)
	if c.Kind == changelog.Delete {
		b = append(b, "null"...)
	} else {
		b = appendJSONRow(b, c.After)
	}
	b = append(b, `,"source":{"version":"2.7.3.Final","connector":"mysql","name":"bench","ts_ms":1767225600000,"snapshot":"false","db":`...)
	b = appendJSONString(b, c.Table.Namespace)
	b = append(b, `,"sequence":null,"table":`...)
	b = appendJSONString(b, c.Table.Name)
	b = append(b, `,"server_id":1,"gtid":null,"file":"binlog.000001","pos":4711,"row":0,"thread":7,"query":null},"op":"`...)
	b = append(b, op...)
	b = append(b, `","ts_ms":1767225600000,"transaction":{"id":`...)
	b = appendJSONString(b, txnID)
	b = append(b, `,"total_order":`...)
	b = strconv.AppendInt(b, int64(order), 10)
	b = append(b, `,"data_collection_order":`...)
	b = strconv.AppendInt(b, int64(order), 10)
	b = append(b, "}}\n"...)
	return b
}

func appendJSONRow(b []byte, r changelog.Row) []byte {
	b = append(b, '{')
	for i, name := range r.Names {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, name)
		b = append(b, ':')
		switch v := r.Values[i].(type) {
		case nil:
			b = append(b, "null"...)
		case changelog.Number:
			b = append(b, v...)
		case string:
			b = appendJSONString(b, v)
		case int64:
			b = strconv.AppendInt(b, v, 10)
		case bool:
			b = strconv.AppendBool(b, v)
		default:
			b = appendJSONString(b, fmt.Sprint(v))
		}
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string. UTF-8 passes through; only
// quotes, backslashes and control characters are escaped.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// latencyHook records how long each successful commit took.
type latencyHook struct {
	mu   sync.Mutex
	took []time.Duration
}

// OnCommit implements engine.HookCommit.
func (h *latencyHook) OnCommit(info engine.CommitInfo) {
	if info.Err != nil {
		return
	}
	h.mu.Lock()
	h.took = append(h.took, info.Took)
	h.mu.Unlock()
}

func (h *latencyHook) percentiles() (p50, p99, maxTook time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.took) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(h.took)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))] }
	return at(0.50), at(0.99), s[len(s)-1]
}

// peakRSS returns the process's peak resident set size (VmHWM) in bytes,
// or -1 when /proc does not say.
func peakRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}

func dropBenchTables(ctx context.Context, db *sql.DB, prefixes ...string) error {
	return onBenchTables(ctx, db, "drop", "DROP TABLE IF EXISTS ", prefixes)
}

func placeholder1(dialect string) string {
	if dialect == "postgres" {
		return "$1"
	}
	return "?"
}

// check compares the target's bench tables with the workload's final state.
func (r *benchResult) check(ctx context.Context, db *sql.DB, final workload.Digest, rr *benchRound) error {
	var diffs []string
	for _, t := range benchTables {
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

// benchDump is one bench table's final rows, written for the bulk load.
type benchDump struct {
	path string
	cols []string
	rows int64
}

// dump writes each bench table's rows in the bulk loaders' text format
// (tab-separated, \N for NULL, backslash escapes: what both LOAD DATA and
// COPY read by default), one file per table.
func (r *benchResult) dump(ctx context.Context, db *sql.DB) ([]benchDump, error) {
	var dumps []benchDump
	r.finalRows = 0
	for _, t := range benchTables {
		d := benchDump{path: filepath.Join(r.opts.dir, "bulk-"+t.name+".tsv")}
		var err error
		if d.cols, d.rows, err = dumpTable(ctx, db, r.prefix+t.name, t.order, d.path); err != nil {
			return dumps, err
		}
		r.finalRows += d.rows
		dumps = append(dumps, d)
	}
	return dumps, nil
}

// bulkMethods names each dialect's bulk path, for the report.
var bulkMethods = map[string]string{
	"mysql":    "LOAD DATA LOCAL INFILE",
	"mariadb":  "LOAD DATA LOCAL INFILE",
	"postgres": "COPY FROM STDIN",
	"sqlite":   "prepared INSERTs",
}

// bulkLoad times loading the dumps into the empty txsink_bulk_ copies
// with the database's own bulk path, in n transactions, each loading the
// next n-th of every table's rows, as txsink's units hold some of every
// table's, and checks every row arrived.
func (r *benchResult) bulkLoad(ctx context.Context, db *sql.DB, dumps []benchDump, n int) (took, serverCPU time.Duration, err error) {
	chunks := make([][]*io.SectionReader, len(dumps)) // per table, per transaction
	for i, d := range dumps {
		f, err := os.Open(d.path)
		if err != nil {
			return 0, 0, err
		}
		defer f.Close()
		// Finding the cuts is not the database's work: it comes first.
		cuts, err := lineCuts(bufio.NewReaderSize(f, 1<<20), d.rows, n)
		if err != nil {
			return 0, 0, fmt.Errorf("read %s: %w", d.path, err)
		}
		for c := range n {
			chunks[i] = append(chunks[i], io.NewSectionReader(f, cuts[c], cuts[c+1]-cuts[c]))
		}
	}
	server0, serverOK := r.serverCPU()
	for c := range n {
		t, err := loadChunks(ctx, db, r.dialect, r.bulkPrefix, dumps, chunks, c)
		if err != nil {
			return 0, 0, err
		}
		took += t
	}
	serverCPU = -1
	if server1, ok := r.serverCPU(); ok && serverOK {
		serverCPU = server1 - server0
	}
	for i, t := range benchTables {
		var got int64
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+r.bulkPrefix+t.name).Scan(&got); err != nil {
			return 0, 0, fmt.Errorf("count %s: %w", r.bulkPrefix+t.name, err)
		}
		if got != dumps[i].rows {
			return 0, 0, fmt.Errorf("bulk load of %s in %s loaded %d rows of %d", t.name, countOf(n, "transaction"), got, dumps[i].rows)
		}
	}
	return took, serverCPU, nil
}

// serverCPU returns the CPU time the target server has used so far (ok
// false when it is not known).
func (r *benchResult) serverCPU() (time.Duration, bool) {
	if r.server == 0 {
		return 0, false
	}
	return cputime.Tree(r.server)
}

// benchServer returns the process of the target's server when it runs on
// this host and can be told apart, 0 otherwise: MariaDB's or MySQL's from
// its pid file or as the only process of its name, PostgreSQL's
// postmaster as the parent of the bench's backend. A target named by a
// host other than this one's loopback is not looked for, so a local
// server of the same kind is never taken for it; SQLite runs inside the
// bench, whose own CPU time counts it.
func benchServer(ctx context.Context, db *sql.DB, dialect, target string) int {
	if !localTarget(target) {
		return 0
	}
	switch dialect {
	case "mysql", "mariadb":
		names := []string{"mariadbd", "mysqld"}
		var pidFile string
		if db.QueryRowContext(ctx, "SELECT @@pid_file").Scan(&pidFile) == nil {
			// Often readable by the server's user only.
			if b, err := os.ReadFile(pidFile); err == nil {
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && slices.Contains(names, cputime.Command(pid)) {
					return pid
				}
			}
		}
		if pid, ok := cputime.Find(names...); ok {
			return pid
		}
	case "postgres":
		var backend int
		if db.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&backend) != nil || cputime.Command(backend) != "postgres" {
			return 0
		}
		if pm, ok := cputime.Parent(backend); ok && cputime.Command(pm) == "postgres" {
			return pm
		}
	}
	return 0
}

// localTarget reports whether target names a server on this host: a
// loopback address, localhost, or a Unix socket (no host, or a path).
func localTarget(target string) bool {
	u, err := url.Parse(target)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if h := u.Query().Get("host"); h != "" {
		host = h
	}
	if host == "" || host == "localhost" || strings.HasPrefix(host, "/") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// lineCuts reads in, lines lines each ending in a newline, and returns
// the n+1 offsets that cut it into n parts of as equal a number of lines
// as can be, the first lines%n parts one line longer; parts are empty
// when in has fewer lines than n.
func lineCuts(in *bufio.Reader, lines int64, n int) ([]int64, error) {
	cuts := make([]int64, 1, n+1)
	var at int64
	for i := range int64(n) {
		want := lines / int64(n)
		if i < lines%int64(n) {
			want++
		}
		for range want {
			line, err := in.ReadSlice('\n')
			for errors.Is(err, bufio.ErrBufferFull) {
				at += int64(len(line))
				line, err = in.ReadSlice('\n')
			}
			if err != nil {
				return nil, err
			}
			at += int64(len(line))
		}
		cuts = append(cuts, at)
	}
	return cuts, nil
}

// loadChunks loads part c of every table's rows (chunks[table][c]) into
// the tables of prefix with the dialect's bulk path, in one transaction,
// and returns how long it took, from BEGIN to COMMIT.
func loadChunks(ctx context.Context, db *sql.DB, dialect, prefix string, dumps []benchDump, chunks [][]*io.SectionReader, c int) (time.Duration, error) {
	switch dialect {
	case "mysql", "mariadb":
		start := time.Now()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return 0, err
		}
		defer tx.Rollback()
		for i, t := range benchTables {
			if chunks[i][c].Size() == 0 {
				continue
			}
			name := fmt.Sprintf("txsink-bench-%s%s-%d", prefix, t.name, c)
			chunk := chunks[i][c]
			mysqldrv.RegisterReaderHandler(name, func() io.Reader { return bufio.NewReaderSize(chunk, 1<<20) })
			_, err := tx.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+name+"' INTO TABLE "+prefix+t.name+
				" CHARACTER SET utf8mb4 FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' ("+strings.Join(dumps[i].cols, ",")+")")
			mysqldrv.DeregisterReaderHandler(name)
			if err != nil {
				return 0, fmt.Errorf("LOAD DATA LOCAL INFILE into %s: %w (the server needs local_infile=ON)", prefix+t.name, err)
			}
		}
		if err := tx.Commit(); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	case "postgres":
		conn, err := db.Conn(ctx)
		if err != nil {
			return 0, err
		}
		defer conn.Close()
		start := time.Now()
		err = conn.Raw(func(dc any) error {
			sc, ok := dc.(*stdlib.Conn)
			if !ok {
				return fmt.Errorf("driver connection is a %T, not pgx", dc)
			}
			pc := sc.Conn().PgConn()
			if _, err := pc.Exec(ctx, "BEGIN").ReadAll(); err != nil {
				return err
			}
			for i, t := range benchTables {
				if chunks[i][c].Size() == 0 {
					continue
				}
				if _, err := pc.CopyFrom(ctx, bufio.NewReaderSize(chunks[i][c], 1<<20), "COPY "+prefix+t.name+" ("+strings.Join(dumps[i].cols, ",")+") FROM STDIN"); err != nil {
					pc.Exec(ctx, "ROLLBACK").ReadAll()
					return fmt.Errorf("COPY into %s: %w", prefix+t.name, err)
				}
			}
			_, err := pc.Exec(ctx, "COMMIT").ReadAll()
			return err
		})
		if err != nil {
			return 0, err
		}
		return time.Since(start), nil
	case "sqlite":
		return loadSQLite(ctx, db, prefix, dumps, chunks, c)
	}
	return 0, fmt.Errorf("no bulk load for dialect %s", dialect)
}

// dumpTable writes table's rows, in key order (the order a bulk load
// would get them in from an export), to path in the text format of
// LOAD DATA and COPY.
func dumpTable(ctx context.Context, db *sql.DB, table, order, path string) ([]string, int64, error) {
	rows, err := db.QueryContext(ctx, "SELECT * FROM "+table+" ORDER BY "+order)
	if err != nil {
		return nil, 0, fmt.Errorf("dump %s: %w", table, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, 0, fmt.Errorf("dump %s: %w", table, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var n int64
	var line []byte
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, 0, fmt.Errorf("dump %s: %w", table, err)
		}
		line = line[:0]
		for i, v := range vals {
			if i > 0 {
				line = append(line, '\t')
			}
			line = appendBulkText(line, v)
		}
		line = append(line, '\n')
		w.Write(line)
		n++
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("dump %s: %w", table, err)
	}
	if err := w.Flush(); err != nil {
		return nil, 0, err
	}
	return cols, n, f.Close()
}

// appendBulkText appends v as one field of LOAD DATA's and COPY's default
// text format.
func appendBulkText(b []byte, v any) []byte {
	var s string
	switch x := v.(type) {
	case nil:
		return append(b, `\N`...)
	case []byte:
		s = string(x)
	case string:
		s = x
	case int64:
		return strconv.AppendInt(b, x, 10)
	case float64:
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	case time.Time:
		return x.UTC().AppendFormat(b, "2006-01-02 15:04:05.999999")
	default:
		s = fmt.Sprint(x)
	}
	return bulktext.AppendEscaped(b, s, false)
}

// loadSQLite is SQLite's bulk path for loadChunks: prepared single-row
// INSERTs, in one transaction. Fields are bound as text; the
// columns' affinities convert them as they would a CSV import's.
func loadSQLite(ctx context.Context, db *sql.DB, prefix string, dumps []benchDump, chunks [][]*io.SectionReader, c int) (time.Duration, error) {
	// Parsing the dump is not the database's work: it comes first.
	records := make([][][]any, len(benchTables))
	for i := range benchTables {
		data, err := io.ReadAll(chunks[i][c])
		if err != nil {
			return 0, err
		}
		for line := range bytes.Lines(data) {
			fields := strings.Split(strings.TrimSuffix(string(line), "\n"), "\t")
			rec := make([]any, len(fields))
			for j, fl := range fields {
				if fl != `\N` {
					rec[j] = bulktext.Unescape(fl)
				}
			}
			records[i] = append(records[i], rec)
		}
	}
	start := time.Now()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	for i, t := range benchTables {
		cols := dumps[i].cols
		marks := strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",")
		st, err := tx.PrepareContext(ctx, "INSERT INTO "+prefix+t.name+" ("+strings.Join(cols, ",")+") VALUES ("+marks+")")
		if err != nil {
			return 0, fmt.Errorf("prepare insert into %s: %w", prefix+t.name, err)
		}
		for _, rec := range records[i] {
			if _, err := st.ExecContext(ctx, rec...); err != nil {
				return 0, fmt.Errorf("insert into %s: %w", prefix+t.name, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("commit: %w", err)
	}
	return time.Since(start), nil
}

// print writes the figures of each mode's rounds, and with --mode both
// how transaction mode's events/s compare with plain mode's, round by
// round.
//
// With --key-partitions both it also compares, per mode, the events/s
// with the memory of keys' partitions on with those with it off.
func (r *benchResult) print(w io.Writer) {
	byMode := map[benchVariant][]benchRound{}
	var modes []benchVariant
	for _, rr := range r.rounds {
		v := benchVariant{rr.mode, rr.keys}
		if byMode[v] == nil {
			modes = append(modes, v)
		}
		byMode[v] = append(byMode[v], rr)
	}
	for i, v := range modes {
		if i > 0 {
			fmt.Fprintln(w)
		}
		r.printMode(w, v, byMode[v])
	}
	tw := &tableWriter{}
	// ratio adds a row comparing the events/s of b's rounds with a's,
	// round by round (each pair ran in the same round).
	ratio := func(name string, a, b []benchRound) {
		if len(a) == 0 || len(a) != len(b) {
			return
		}
		v := make([]float64, len(a))
		var each []string
		for i := range a {
			// Same events: the ratio of the rates is that of the run times.
			v[i] = a[i].run.Seconds() / b[i].run.Seconds()
			each = append(each, fmt.Sprintf("%.2f", v[i]))
		}
		tw.row(name, "events/s "+spread(v, func(x float64) string { return fmt.Sprintf("%.2f×", x) })+", each round "+strings.Join(each, " "))
	}
	keys := r.rounds[0].keys
	ratio("transaction ÷ plain", byMode[benchVariant{"plain", keys}], byMode[benchVariant{"transaction", keys}])
	if len(modes) > 1 {
		for _, mode := range []string{"plain", "transaction"} {
			var on, off []benchRound
			for _, v := range modes {
				if v.mode == mode && v.keys > 0 {
					on = byMode[v]
				} else if v.mode == mode {
					off = byMode[v]
				}
			}
			ratio("key memory on ÷ off, "+mode, off, on)
		}
	}
	if len(tw.labels) > 0 {
		fmt.Fprintln(w)
		tw.write(w)
	}
}

// printMode writes the figures of one mode's rounds.
func (r *benchResult) printMode(w io.Writer, v benchVariant, rounds []benchRound) {
	o := r.opts
	n := len(rounds)
	// Each figure per round, then its median (and range, over rounds).
	per := func(f func(rr *benchRound) float64) []float64 {
		v := make([]float64, n)
		for i := range rounds {
			v[i] = f(&rounds[i])
		}
		return v
	}
	written := func(rr *benchRound) int64 { return rr.upserted + rr.deleted + rr.inserted }
	secs := per(func(rr *benchRound) float64 { return rr.run.Seconds() })
	eventsPerSec := per(func(rr *benchRound) float64 { return float64(r.events) / rr.run.Seconds() })
	rowsPerSec := per(func(rr *benchRound) float64 { return float64(written(rr)) / rr.run.Seconds() })
	bulkPerSec := per(func(rr *benchRound) float64 { return float64(r.finalRows) / rr.bulkTook.Seconds() })
	ratio := func(num []float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = num[i] / bulkPerSec[i]
		}
		return v
	}
	first := &rounds[0]
	tw := &tableWriter{}
	flush := fmt.Sprintf("flush %d rows or %d MiB", o.flushRows, o.flushMiB)
	if !o.coalesce {
		flush += ", not coalesced"
	}
	tw.row("workload", fmt.Sprintf("%s, %d orders, %s, %s, %s", o.workload, o.orders, countOf(o.partitions, "partition"), v.label(o), flush))
	tw.row("target", fmt.Sprintf("%s (%s)", r.dialect, config.RedactURL(o.target)))
	if n > 1 {
		tw.row("rounds", fmt.Sprintf("%d, each a txsink run then the bulk load into emptied tables; figures are medians [ranges]", n))
	}
	tw.row("input", fmt.Sprintf("%d events (%d Debezium records, %d transactions, %.1f MiB)", r.events, r.records, r.txns, float64(r.inputBytes)/(1<<20)))
	tw.row("written", fmt.Sprintf("%d rows (%d upserted, %d deleted, %d inserted); %d final rows", written(first), first.upserted, first.deleted, first.inserted, r.finalRows))
	tw.row("txsink run", spread(secs, fixedSecs))
	if first.cpu >= 0 {
		cpuSecs := per(func(rr *benchRound) float64 { return rr.cpu.Seconds() })
		cores := per(func(rr *benchRound) float64 { return rr.cpu.Seconds() / rr.run.Seconds() })
		perEvent := per(func(rr *benchRound) float64 { return float64(rr.cpu.Microseconds()) / float64(max(r.events, 1)) })
		cpu := fmt.Sprintf("%s (%s cores; %s µs per event)",
			spread(cpuSecs, fixedSecs),
			spread(cores, fixed2), spread(perEvent, fixed2))
		if r.dialect == "sqlite" {
			cpu += ", SQLite's own work included"
		}
		tw.row("txsink CPU", cpu)
	}
	if r.server != 0 && !slices.ContainsFunc(rounds, func(rr benchRound) bool { return rr.serverCPU < 0 || rr.bulkServerCPU < 0 }) {
		// Two processes share the host's cores: the server's CPU time
		// beside txsink's shows whether it had the cores it had alone.
		runCPU := per(func(rr *benchRound) float64 { return rr.serverCPU.Seconds() })
		runCores := per(func(rr *benchRound) float64 { return rr.serverCPU.Seconds() / rr.run.Seconds() })
		bulkCPU := per(func(rr *benchRound) float64 { return rr.bulkServerCPU.Seconds() })
		bulkCores := per(func(rr *benchRound) float64 { return rr.bulkServerCPU.Seconds() / rr.bulkTook.Seconds() })
		tw.row("database CPU", fmt.Sprintf("%s (%s cores) in txsink's run, %s (%s cores) in the bulk load (the server's process %d on this host, with its children)",
			spread(runCPU, fixedSecs), spread(runCores, fixed2), spread(bulkCPU, fixedSecs), spread(bulkCores, fixed2), r.server))
	}
	tw.row("input events/s", spread(eventsPerSec, fixed0))
	tw.row("rows written/s", spread(rowsPerSec, fixed0))
	bulkTook := per(func(rr *benchRound) float64 { return rr.bulkTook.Seconds() })
	tw.row("bulk load", fmt.Sprintf("%s rows/s (%s of %d rows in %s)", spread(bulkPerSec, fixed0), bulkMethods[r.dialect], r.finalRows,
		spread(bulkTook, fixedSecs)))
	times := func(v float64) string { return fmt.Sprintf("%.2f×", v) }
	inCommitsPerSec := per(func(rr *benchRound) float64 { return float64(r.finalRows) / rr.bulkCommitsTook.Seconds() })
	inCommitsTook := per(func(rr *benchRound) float64 { return rr.bulkCommitsTook.Seconds() })
	tw.row("bulk in commits", fmt.Sprintf("%s rows/s (the same rows, one transaction per txsink commit, in %s): %s the bulk load",
		spread(inCommitsPerSec, fixed0),
		spread(inCommitsTook, fixedSecs),
		spread(ratio(inCommitsPerSec), times)))
	tw.row("rows/s ÷ bulk", spread(ratio(rowsPerSec), times))
	tw.row("events/s ÷ bulk", spread(ratio(eventsPerSec), times))
	ofInCommits := make([]float64, n)
	for i := range ofInCommits {
		ofInCommits[i] = eventsPerSec[i] / inCommitsPerSec[i]
	}
	tw.row("÷ bulk in commits", spread(ofInCommits, times)+" (events/s against the rows/s of the bulk load in txsink's commits)")
	if n > 1 {
		var each []string
		for _, v := range ratio(eventsPerSec) {
			each = append(each, fmt.Sprintf("%.2f", v))
		}
		tw.row("each round", "events/s ÷ bulk "+strings.Join(each, " "))
	}
	rss := "unknown"
	if first.peakRSS >= 0 {
		mib := per(func(rr *benchRound) float64 { return float64(rr.peakRSS) / (1 << 20) })
		rss = spread(mib, func(v float64) string { return fmt.Sprintf("%.1f MiB", v) })
		if first.rssNote != "" {
			rss += " (" + first.rssNote + ")"
		}
	}
	tw.row("peak RSS", rss)
	tw.row("commits", spread(per(func(rr *benchRound) float64 { return float64(rr.commits) }), fixed0))
	lat := func(f func(rr *benchRound) time.Duration) string {
		return spread(per(func(rr *benchRound) float64 { return f(rr).Seconds() }), fixedSecs)
	}
	tw.row("commit latency", fmt.Sprintf("p50 %s, p99 %s, max %s",
		lat(func(rr *benchRound) time.Duration { return rr.p50 }),
		lat(func(rr *benchRound) time.Duration { return rr.p99 }),
		lat(func(rr *benchRound) time.Duration { return rr.maxLatency })))
	var differs []string
	for i, rr := range rounds {
		if !rr.verified {
			differs = append(differs, fmt.Sprintf("round %d: %s", i+1, rr.verifyErr))
		}
	}
	switch {
	case !o.verify:
		tw.row("final state", "not checked (--verify=false)")
	case len(differs) == 0 && n > 1:
		tw.row("final state", "verified: the target equals the workload's final state, every round")
	case len(differs) == 0:
		tw.row("final state", "verified: the target equals the workload's final state")
	default:
		tw.row("final state", "DIFFERS: "+strings.Join(differs, "; "))
	}
	if r.profile != "" {
		tw.row("cpu profile", r.profile+" (go tool pprof -top "+r.profile+")")
	}
	if r.memProfile != "" {
		tw.row("allocations", r.memProfile+" (go tool pprof -sample_index=alloc_space -top -diff_base "+r.memProfile+".before "+r.memProfile+")")
	}
	tw.write(w)
}

func fixed0(v float64) string { return fmt.Sprintf("%.0f", v) }
func fixed2(v float64) string { return fmt.Sprintf("%.2f", v) }

// fixedSecs formats v seconds as fmtDur does.
func fixedSecs(v float64) string { return fmtDur(time.Duration(v * float64(time.Second))) }

// spread formats one figure of every round: the value for one round, the
// median and [min-max] for several.
func spread(v []float64, format func(float64) string) string {
	if len(v) == 1 {
		return format(v[0])
	}
	s := slices.Clone(v)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return fmt.Sprintf("%s [%s–%s]", format(med), format(s[0]), format(s[len(s)-1]))
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

// tableWriter prints label/value rows with the labels aligned.
type tableWriter struct{ labels, values []string }

func (t *tableWriter) row(label, value string) {
	t.labels = append(t.labels, label)
	t.values = append(t.values, value)
}

func (t *tableWriter) write(w io.Writer) {
	width := 0
	for _, l := range t.labels {
		width = max(width, utf8.RuneCountInString(l))
	}
	for i, l := range t.labels {
		fmt.Fprintf(w, "  %s%s  %s\n", l, strings.Repeat(" ", width-utf8.RuneCountInString(l)), t.values[i])
	}
}

// countOf writes n things, singular for one: "1 partition", "8 partitions".
func countOf(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// writeAllocs writes the allocations profile of the process so far to
// path. Two of them, taken before and after a run, give the run's own
// allocations as their difference (pprof's -diff_base).
func writeAllocs(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("allocations profile: %w", err)
	}
	return f.Close()
}

// startWriting creates path and starts a profiler (start) writing to it;
// the function it returns stops the profiler (stop) and closes the file.
func startWriting(path, what string, start func(io.Writer) error, stop func()) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return func() {
		stop()
		f.Close()
	}, nil
}
