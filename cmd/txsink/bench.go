package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/benchrun"
	"github.com/txsink/txsink/metrics"
)

// cmdBench is `txsink bench`: its flags and help; the bench itself is
// package benchrun's, run through the engine `txsink run` uses.
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
--version-column both compares runs without and with tables[].version-column
on the orders table (created_at, which no change moves, so every guarded
write lands): what the version guard's statements cost.
--foreign-keys both compares runs into tables without and with FOREIGN KEY
constraints (txn and insert-only): with --foreign-keys the workload has a
third level, orders <- order_items <- item_notes, whose changelog deletes
children before their parents as a source under the constraints does (no
ON DELETE action), and with them on txsink orders every unit's statements
for them: what the ordering and the server's checks cost. The bulk load's
copies never have the constraints, so both variants share its baseline.

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
rows under a pipeline name of its own and removes them, and drops the
txsink_progress table too when the bench created it and it is left empty.

Examples:
  txsink bench --workload insert-only --orders 1000000 --target 'mysql://txsink:txsink@127.0.0.1:3306/test'
  txsink bench --workload update-heavy --orders 20000 --target 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable'
  txsink bench --workload txn --orders 2000`, stdout)
	var o benchrun.Options
	fs.StringVar(&o.Workload, "workload", "insert-only", "insert-only, update-heavy or txn")
	fs.IntVar(&o.Orders, "orders", 100000, "orders to generate (update-heavy: hot keys)")
	fs.StringVar(&o.Target, "target", "", "target URL (mysql://, postgres://, sqlite://); default: a SQLite file in --dir")
	fs.IntVar(&o.Partitions, "partitions", 0, "changelog files the workload is spread over (default 1; txn: 8)")
	fs.IntVar(&o.ChangesPerKey, "changes-per-key", 12, "update-heavy: changes per key (at least 10)")
	fs.StringVar(&o.Mode, "mode", "", "plain, transaction, or both: each round then runs plain mode and transaction mode, one after the other, plain mode first in odd rounds (default: transaction for txn, plain otherwise)")
	fs.StringVar(&o.KeyPartitions, "key-partitions", "", "sink key-partitions.remember, or both: each round then runs with the default and with 0, taking turns to go first (default: the config's default)")
	fs.StringVar(&o.VersionColumn, "version-column", "", "off, on (the orders table's version-column is created_at: its upserts and deletes are guarded), or both: each round then runs without and with it, taking turns to go first (default: off)")
	fs.StringVar(&o.ForeignKeys, "foreign-keys", "", "off, on (a third table, item_notes, under order_items, and FOREIGN KEY constraints from items to orders and notes to items), or both: each round then runs without and with them, taking turns to go first (default: the two tables without notes; not for update-heavy)")
	fs.IntVar(&o.FlushRows, "flush-rows", 5000, "sink buffer-flush.max-rows")
	fs.IntVar(&o.FlushMiB, "flush-mib", 16, "sink buffer-flush.max-bytes, in MiB (txsink run's memory limit follows it)")
	fs.StringVar(&o.Dir, "dir", "", "folder for the changelog files (default: a temporary folder, removed afterwards)")
	fs.BoolVar(&o.Keep, "keep", false, "keep the bench tables in the target")
	fs.BoolVar(&o.Verify, "verify", true, "check the target against the workload's final state")
	fs.BoolVar(&o.Coalesce, "coalesce", true, "sink buffer-flush.coalesce")
	fs.IntVar(&o.Rounds, "rounds", 1, "rounds of a txsink run followed by the bulk load, each into emptied tables; the figures are then medians with their ranges")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the txsink run to this file (the first round's)")
	fs.StringVar(&o.TraceFile, "trace", "", "write an execution trace of the first round's txsink run to this file (go tool trace F): where its goroutines wait")
	fs.StringVar(&o.MemProfile, "memprofile", "", "write the allocations of the process to this file after the first round's txsink run, and to this file + \".before\" before it (go tool pprof -sample_index=alloc_space -diff_base F.before F)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := o.Resolve(); err != nil {
		var ue *benchrun.UsageError
		if errors.As(err, &ue) {
			return usageError{msg: ue.Msg}
		}
		return err
	}
	if o.Dir == "" {
		d, err := os.MkdirTemp("", "txsink-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		o.Dir = d
	} else if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return err
	}
	if o.Target == "" {
		o.Target = "sqlite://" + filepath.Join(o.Dir, "bench.db")
	}
	r, err := benchrun.Run(ctx, &o, openBenchPipeline(o.Dir), stderr)
	if err != nil {
		return err
	}
	r.Print(stdout)
	return r.Err()
}

// openBenchPipeline builds each bench round's pipeline as txsink run
// does: its memory tuning, the engine with the metrics hooks (they count
// every change, so the bench pays for them too), files relative to dir.
func openBenchPipeline(dir string) benchrun.Opener {
	return func(ctx context.Context, cfg *config.Config, commit func(time.Duration, error)) (benchrun.Pipeline, error) {
		tuneGC(cfg) // as txsink run does
		e, err := engine.New(ctx, cfg, engine.WithBaseDir(dir), engine.WithHooks(metrics.New(cfg), commitHook(commit)))
		if err != nil {
			return nil, err
		}
		return benchPipeline{e}, nil
	}
}

// benchPipeline is an engine as a bench round's pipeline.
type benchPipeline struct{ e *engine.Engine }

func (p benchPipeline) Run(ctx context.Context) error { return p.e.Run(ctx, engine.RunOptions{}) }
func (p benchPipeline) Close() error                  { return p.e.Close() }

func (p benchPipeline) Stats() benchrun.Stats {
	st := p.e.Stats()
	return benchrun.Stats{Events: st.Events, Upserted: st.Upserted, Deleted: st.Deleted, Inserted: st.Inserted, Commits: st.Commits}
}

// commitHook hands every commit the engine attempts to the bench.
type commitHook func(took time.Duration, err error)

// OnCommit implements engine.HookCommit.
func (h commitHook) OnCommit(info engine.CommitInfo) { h(info.Took, info.Err) }
