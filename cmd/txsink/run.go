package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/clock"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/diagnose"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/metrics"
	"github.com/txsink/txsink/source"
	"github.com/txsink/txsink/source/file"
	"github.com/txsink/txsink/source/kafka"
	"github.com/txsink/txsink/source/postgres"
	"github.com/txsink/txsink/statushttp"
)

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", `txsink run --config pipeline.yaml

Applies the pipeline's changelog to its target. A file source ends (exit 0)
once every file is consumed (with source.follow: true it keeps tailing until
SIGINT or SIGTERM). A kafka source runs until SIGINT or SIGTERM as a member
of source.group: start the same config on several machines and the group
spreads the topics' partitions over them. A nats source reads its JetStream
stream until SIGINT or SIGTERM. Run it again with the same name:
it resumes after the last commit stored in the target and applies nothing
twice. On SIGINT/SIGTERM it commits what it has read and exits 0; a file
source stopped before its end says how far it got ("interrupted at 42%, a
rerun resumes"), a stream without an end (follow, kafka, nats, postgres)
that it was stopped by a signal.

While it runs it serves, on --http (loopback only by default):
  /metrics  Prometheus metrics (docs/operations.md says what each means)
  /healthz  200 while the process runs
  /readyz   200 while the pipeline is running, 503 otherwise (degraded:
            commits to the target fail and are retried; the body says why)
  /status   the pipeline's state and positions as JSON (no credentials)
On a terminal it draws a progress bar (following or from Kafka, a line of
events/s, rows/s, lag and last commit, or "caught up, waiting for new
records") and ends with a summary table; piped, it logs that line every
--progress-interval and "caught up, waiting for new records" once each time
it catches up, on stderr, and prints one summary line on stdout.

In transaction mode a source transaction whose end is not in the input is
not applied: the summary and the log name each one left open (partition,
transaction id, first position), and the next run, reading again from the
stored progress, which stays before it, applies it once its end is read.
The exit code is still 0 (the target is consistent, as of the last whole
transaction), or 3 with --fail-on-open-txn.

Exit codes: 0 done; 1 stopped by an error; 2 a mistake in the command line;
3 the input ended inside a source transaction (--fail-on-open-txn only).

Examples:
  txsink run --config pipeline.yaml --log-level debug
  txsink run --config pipeline.yaml --http 0.0.0.0:9464    # let Prometheus scrape from other hosts
  txsink run --config pipeline.yaml --http off             # no HTTP server
  curl -s 127.0.0.1:9464/status                            # while it runs`, stdout)
	cfgPath := fs.String("config", "", "pipeline configuration file (YAML); required")
	httpAddr := fs.String("http", defaultHTTPAddr, `address of the /metrics, /healthz, /readyz and /status server; "" or "off" disables it`)
	progressEvery := fs.Duration("progress-interval", 30*time.Second, "how often a progress line (events/s, rows/s, lag, last commit) is logged when stderr is not a terminal; 0 logs none")
	failOpen := fs.Bool("fail-on-open-txn", false, "exit 3, not 0, when the input ends inside a source transaction (transaction mode), which is then not applied")
	logger := logFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *cfgPath == "" {
		return usageError{msg: "--config is required (see txsink run --help)"}
	}
	httpSet := false
	fs.Visit(func(f *flag.Flag) { httpSet = httpSet || f.Name == "http" })
	// Log lines go through the bar, so one never lands in the middle of it.
	bar := newIdleBar(stderr)
	log, err := logger(bar.Logs(stderr))
	if err != nil {
		return err
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	baseDir := configDir(*cfgPath)
	tuneGC(cfg)
	var files file.Config
	if cfg.Source.Type == file.Type {
		if err := source.Decode(cfg.Source.Settings(), &files); err != nil {
			return err
		}
	}
	attrs, err := startAttrs(cfg)
	if err != nil {
		return err
	}
	log.Info("starting", attrs...)
	m := metrics.New(cfg)
	// The endpoints are up before the engine opens the target, which may
	// wait for it (startup-timeout): /readyz answers 503 meanwhile.
	status := &engineStatus{name: cfg.Name}
	if *httpAddr != "" && *httpAddr != "off" {
		srv, err := startStatusServer(*httpAddr, cfg, m, status)
		switch {
		case err != nil && httpSet:
			return fmt.Errorf("--http %s: %w", *httpAddr, err)
		case err != nil:
			// The default address is a convenience: a second pipeline on
			// the same host must still run, only without the endpoints.
			log.Warn("not serving metrics and status: the default address is taken; choose one with --http ADDR", "addr", *httpAddr, "err", err)
		default:
			log.Info("serving metrics and status", "url", "http://"+srv.Addr().String(), "endpoints", "/metrics /healthz /readyz /status")
			defer func() {
				// Requests in flight get a moment; the run's result does
				// not wait on a slow scraper.
				sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				defer cancel()
				if err := srv.Shutdown(sctx); err != nil {
					log.Warn("status server shutdown", "err", err)
				}
			}()
		}
	}
	e, err := engine.New(ctx, cfg, engine.WithLogger(log), engine.WithBaseDir(baseDir), engine.WithConfigFile(*cfgPath), engine.WithHooks(m))
	if err != nil {
		return err
	}
	defer e.Close()
	status.e.Store(e)
	if !files.Follow {
		// Following has no end to measure progress against.
		bar.begin(remainingBytes(e, files.PartitionPaths(), baseDir), func() int64 { return sumEvents(e.Stats()) })
	} else {
		bar.begin(0, nil)
	}
	stopLive := func() {}
	if !bar.drawing() {
		live := &liveProgress{clock: clock.Real, status: e.Status, log: log, every: *progressEvery,
			waits: files.Follow || cfg.Source.Type == kafka.Type}
		if isTerminal(stderr) {
			live.draw = bar.show
		}
		lctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			live.run(lctx)
		}()
		stopLive = func() {
			cancel()
			<-done
		}
	}
	runErr := e.Run(ctx, engine.RunOptions{Progress: bar})
	stopLive()
	bar.done()
	st := e.Stats()
	took := time.Since(st.Started)
	stopped := ""
	if runErr == nil && ctx.Err() != nil && !st.EndOfInput && cfg.Source.Type == file.Type && !files.Follow {
		// Files have an end: a signal before it is not "done".
		stopped = interruptedAt(bar)
	} else if runErr == nil && ctx.Err() != nil && !st.EndOfInput {
		// A stream without an end (follow, Kafka, a database) is stopped by
		// a signal as its normal way out; "done" would still claim more
		// than the run knows.
		stopped = "stopped by a signal, a rerun resumes after the last commit"
	}
	if isTerminal(stdout) {
		fmt.Fprint(stdout, summaryTable(cfg.Name, st, took, runErr, stopped))
	} else {
		fmt.Fprintln(stdout, summaryLine(cfg.Name, st, took, stopped))
	}
	if runErr != nil {
		return runErr
	}
	log.Info("stopped", "pipeline", cfg.Name, "commits", st.Commits)
	if *failOpen && st.EndOfInput && len(st.Unfinished) > 0 {
		return exitError{code: exitOpenTxn, msg: fmt.Sprintf("the input ended inside %s (--fail-on-open-txn): %s; nothing of %s is committed, and the next run applies %s once %s read",
			countOf(len(st.Unfinished), "source transaction"), listOpen(st.Unfinished, len(st.Unfinished)), them(st.Unfinished), them(st.Unfinished), endIs(st.Unfinished))}
	}
	return nil
}

// exitOpenTxn is the exit code of a run whose input ended inside a source
// transaction, under --fail-on-open-txn: not 1, since nothing failed and
// the target is consistent, but a script that must know the input was
// applied whole can tell.
const exitOpenTxn = 3

// openNote is the part of the summary line that names the source
// transactions the run left open, "" when none.
func openNote(st engine.Stats) string {
	n := len(st.Unfinished)
	if n == 0 {
		return ""
	}
	when := "at the end of input"
	if !st.EndOfInput {
		when = "when stopped"
	}
	return fmt.Sprintf("; %s left open %s, not applied: %s; the next run applies %s once %s read",
		countOf(n, "source transaction"), when, listOpen(st.Unfinished, 3), them(st.Unfinished), endIs(st.Unfinished))
}

// listOpen lists the first max of open (each with its first position),
// and says how many more the log names.
func listOpen(open []engine.OpenTxn, max int) string {
	parts := make([]string, 0, min(len(open), max)+1)
	for i, o := range open {
		if i == max {
			parts = append(parts, fmt.Sprintf("and %d more (the log names each)", len(open)-max))
			break
		}
		parts = append(parts, o.String())
	}
	return strings.Join(parts, ", ")
}

func them(open []engine.OpenTxn) string {
	if len(open) == 1 {
		return "it"
	}
	return "them"
}

func endIs(open []engine.OpenTxn) string {
	if len(open) == 1 {
		return "its end is"
	}
	return "their ends are"
}

// defaultHTTPAddr is loopback only: metrics and status reveal table names
// and positions, so exposing them beyond the host is a decision to make.
const defaultHTTPAddr = "127.0.0.1:9464"

// engineStatus is the status the endpoints serve: the engine's once it
// exists, before that (while txsink run waits for the target) a pipeline
// starting.
type engineStatus struct {
	name string
	e    atomic.Pointer[engine.Engine]
}

// Status implements statushttp.Source and metrics.Source.
func (s *engineStatus) Status() engine.Status {
	if e := s.e.Load(); e != nil {
		return e.Status()
	}
	return engine.Status{Pipeline: s.name, State: engine.StateStarting}
}

// startStatusServer serves the pipeline's metrics (with the Go runtime's
// and the process's) and status, e's, on addr.
func startStatusServer(addr string, cfg *config.Config, m *metrics.Metrics, e *engineStatus) (*statushttp.Server, error) {
	reg := prometheus.NewRegistry()
	b := build()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), metrics.BuildInfo(b.Version, b.Commit))
	if err := m.Register(reg, e); err != nil {
		return nil, err
	}
	return statushttp.Start(addr, statushttp.Handler(statushttp.Options{Source: e, Gatherer: reg, TargetURL: cfg.Target.URL}))
}

// remainingBytes is what is left to read of the source files, from the
// positions stored in the target on: the progress bar's 100%. It is 0
// (no bar) when a size is unknown, as for stdin.
func remainingBytes(e *engine.Engine, partitions [][]string, baseDir string) int64 {
	var n int64
	for _, paths := range partitions {
		files, err := file.Files(file.Partition{Name: paths[0], Paths: paths})
		if err != nil {
			return 0
		}
		var size int64
		for _, path := range files {
			fi, err := os.Stat(path)
			if path == "-" || err != nil || !fi.Mode().IsRegular() {
				return 0
			}
			size += fi.Size()
		}
		pos, _ := e.Progress(file.Name(paths[0], baseDir))
		n += max(size-pos.Offset, 0)
	}
	return n
}

func sumEvents(st engine.Stats) int64 {
	var n int64
	for _, v := range st.Events {
		n += v
	}
	return n
}

// interruptedAt says how far a run stopped by a signal got through its
// files: "interrupted at 42%, a rerun resumes". Without a known size (a
// FIFO, standard input) it cannot say how far, and a rerun reads such a
// stream from its start.
func interruptedAt(bar *progressBar) string {
	if pct, ok := bar.percent(); ok {
		return fmt.Sprintf("interrupted at %d%%, a rerun resumes", pct)
	}
	return "interrupted before the end of the input"
}

// summaryTable renders the summary a person reads at the end of a run on
// a terminal: what was read, what was written, and how fast. stopped, when
// not "", says the run was interrupted before the end of its input and how
// far it got (interruptedAt).
func summaryTable(name string, st engine.Stats, took time.Duration, runErr error, stopped string) string {
	var b strings.Builder
	switch {
	case runErr != nil:
		fmt.Fprintf(&b, "\n%s: stopped by an error (below) in %s\n\n", name, took.Round(time.Millisecond))
	case stopped != "":
		fmt.Fprintf(&b, "\n%s: %s (after %s)\n\n", name, stopped, took.Round(time.Millisecond))
	default:
		fmt.Fprintf(&b, "\n%s: done in %s\n\n", name, took.Round(time.Millisecond))
	}
	row := func(label string, v any, note string) {
		fmt.Fprintf(&b, "%s\n", strings.TrimRight(fmt.Sprintf("  %-17s %12v  %s", label, v, note), " "))
	}
	events := sumEvents(st)
	row("events read", events, "")
	for _, k := range []changelog.Kind{changelog.Insert, changelog.UpdateBefore, changelog.UpdateAfter, changelog.Delete} {
		row("  "+k.String(), st.Events[k], kindNote[k])
	}
	if n := st.Events[changelog.Truncate]; n > 0 {
		row("  "+changelog.Truncate.String(), n, kindNote[changelog.Truncate])
	}
	written := st.Upserted + st.Deleted + st.Inserted
	row("rows written", written, "after per-key reduction")
	row("  upserted", st.Upserted, "")
	row("  deleted", st.Deleted, "")
	row("  inserted", st.Inserted, "into append-only and history tables")
	if len(st.Tables) > 0 {
		row("rows by table", "", "upserted / deleted / inserted")
		names := slices.Sorted(maps.Keys(st.Tables))
		for _, name := range names {
			ts := st.Tables[name]
			row("  "+name, ts.Upserted+ts.Deleted+ts.Inserted, fmt.Sprintf("%d / %d / %d", ts.Upserted, ts.Deleted, ts.Inserted))
		}
	}
	ratio := "-"
	if written > 0 {
		ratio = fmt.Sprintf("%.2f", float64(events)/float64(written))
	}
	row("reduction ratio", ratio, "events per row written")
	row("commits", st.Commits, "target transactions")
	if st.Txns > 0 {
		row("source txns", st.Txns, "committed whole")
	}
	if st.Skipped > 0 {
		row("skipped", st.Skipped, "changes of unmatched tables")
	}
	if st.SchemaChanges > 0 {
		row("schema changes", st.SchemaChanges, "DDL records, skipped (txsink applies rows only)")
	}
	if st.Messages > 0 {
		row("messages", st.Messages, "logical decoding messages, skipped")
	}
	if st.DeadLetters > 0 {
		row("dead-lettered", st.DeadLetters, "quarantined; txsink dead-letters lists them")
	}
	if st.GuardRefused > 0 {
		row("guard refused", st.GuardRefused, "upserts and deletes kept out: the stored row's version was newer")
	}
	if st.DeletesIgnored > 0 {
		row("deletes ignored", st.DeletesIgnored, "tables with delete: ignore keep their rows")
	}
	if st.Copies > 0 {
		row("copies dropped", st.Copies, "published again by the source's producer, applied before")
	}
	if st.Retries > 0 {
		row("retries", st.Retries, "transient target errors")
	}
	if n := len(st.Unfinished); n > 0 {
		when := "at the end of input"
		if !st.EndOfInput {
			when = "when stopped"
		}
		what := "source transactions"
		if n == 1 {
			what = "source transaction"
		}
		row("left open", n, fmt.Sprintf("%s %s, not applied; the next run applies %s once %s read",
			what, when, them(st.Unfinished), endIs(st.Unfinished)))
		for i, o := range st.Unfinished {
			if i == 10 {
				row("", "", fmt.Sprintf("and %d more (the log names each)", n-10))
				break
			}
			row("", "", o.String())
		}
	}
	row("duration", took.Round(time.Millisecond), "")
	secs := max(took.Seconds(), 1e-9)
	row("rows/s", fmt.Sprintf("%.0f", float64(written)/secs), "written")
	row("events/s", fmt.Sprintf("%.0f", float64(events)/secs), "read")
	return b.String()
}

// kindNote explains each change kind in the summary table.
var kindNote = map[changelog.Kind]string{
	changelog.Insert:       "inserts",
	changelog.UpdateBefore: "update before-images (ignored)",
	changelog.UpdateAfter:  "update after-images",
	changelog.Delete:       "deletes",
	changelog.Truncate:     "tables emptied (source.truncate: delete-all)",
}

// summaryLine renders the one-line summary printed when a run ends;
// stopped is as for summaryTable.
func summaryLine(name string, st engine.Stats, took time.Duration, stopped string) string {
	var events int64
	kinds := make([]string, 0, 5)
	for _, k := range []changelog.Kind{changelog.Insert, changelog.UpdateBefore, changelog.UpdateAfter, changelog.Delete, changelog.Truncate} {
		if n := st.Events[k]; n > 0 {
			events += n
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
	}
	written := st.Upserted + st.Deleted + st.Inserted
	rate := 0.0
	if took > 0 {
		rate = float64(events) / took.Seconds()
	}
	var b strings.Builder
	b.WriteString(name + ": ")
	if stopped != "" {
		b.WriteString(stopped + "; ")
	}
	b.WriteString(countOf(events, "event"))
	if len(kinds) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(kinds, ", "))
	}
	fmt.Fprintf(&b, " -> %s written (%d upserted, %d deleted, %d inserted) in %s",
		countOf(written, "row"), st.Upserted, st.Deleted, st.Inserted, countOf(st.Commits, "commit"))
	if st.Skipped > 0 {
		fmt.Fprintf(&b, ", %d skipped", st.Skipped)
	}
	if st.SchemaChanges > 0 {
		fmt.Fprintf(&b, ", %s skipped", countOf(st.SchemaChanges, "schema change record"))
	}
	if st.Messages > 0 {
		fmt.Fprintf(&b, ", %s skipped", countOf(st.Messages, "logical decoding message"))
	}
	if st.DeadLetters > 0 {
		fmt.Fprintf(&b, ", %d dead-lettered (txsink dead-letters lists them)", st.DeadLetters)
	}
	if st.GuardRefused > 0 {
		fmt.Fprintf(&b, ", %d refused by the version guard (the stored row was newer)", st.GuardRefused)
	}
	if st.DeletesIgnored > 0 {
		fmt.Fprintf(&b, ", %s ignored", countOf(st.DeletesIgnored, "delete"))
	}
	if st.Copies > 0 {
		fmt.Fprintf(&b, ", %s dropped (published again, applied before)", countOf(st.Copies, "copy"))
	}
	if st.Retries > 0 {
		fmt.Fprintf(&b, ", %s", countOf(st.Retries, "retry"))
	}
	fmt.Fprintf(&b, ", %s, %.0f events/s", took.Round(time.Millisecond), rate)
	b.WriteString(openNote(st))
	return b.String()
}

func cmdCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("check", `txsink check --config pipeline.yaml [--sample N]

Validates the configuration and checks it against the target and a sample of
the source, without writing anything. A file source is sampled from the start
of each file; a Kafka source from where a run would read next in each
partition (the target's progress, else source.start), without joining the
consumer group; a NATS stream from where a run would read next, without
waiting for messages not there yet. It reports, one line per finding:

  error    the run would refuse to start, stop or write wrong data: a
           source file that is missing or shorter than its stored progress,
           a target table that is missing, one of txsink's own, or whose
           PRIMARY KEY disagrees with primary-key, a sampled change without
           its key columns, a sampled value its column cannot hold (too
           long, too many digits or fractional seconds, NULL into NOT NULL,
           a column the table lacks), a table schema.create: missing
           cannot create (no types, no key), a NOT NULL column without a default
           that neither the sample nor the format's schema ever sends, a
           Kafka topic the brokers do not have, brokers that cannot be
           reached, a NATS stream the server does not have or no longer
           holds the target's position of
  warning  it may: NOT NULL UNIQUE indexes besides the key (rows that
           hold a value a flush takes are deleted and written again),
           UNIQUE indexes txsink cannot read, triggers, foreign keys in a
           cycle txsink can neither order nor defer, server timeouts
           shorter than the interval, a StarRocks Unique Key table written
           append-only
  info     worth knowing: the order foreign keys give a flush's
           statements, nullable UNIQUE indexes, case-insensitive key
           columns, cascading foreign keys, rows that another writer put
           into a table; for StarRocks the server's version and each
           table's kind and key; under schema.create: missing the exact
           CREATE TABLE a run would execute for a missing table, and under
           schema.evolve: add-columns the columns it would add

each with what to do, then a summary line. Records that cannot be decoded
are grouped only when their cause is the same. Exits 1 when there is an
error (everything txsink run refuses to start with is one), 0 otherwise;
the errors are repeated on stderr unless it is where stdout goes (the same
terminal, or 2>&1).

Examples:
  txsink check --config pipeline.yaml
  txsink check --config pipeline.yaml --sample 0       # the target only
  txsink check --config pipeline.yaml --sample 100000  # a bigger sample`, stdout)
	cfgPath := fs.String("config", "", "pipeline configuration file (YAML); required")
	sample := fs.Int("sample", diagnose.DefaultSample, "records to read of each source file, Kafka partition or NATS stream and check against the target; 0 reads none")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *cfgPath == "" {
		return usageError{msg: "--config is required (see txsink check --help)"}
	}
	if *sample < 0 {
		return usageError{msg: fmt.Sprintf("--sample %d: want 0 or more records", *sample)}
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	report, err := diagnose.Run(ctx, cfg, diagnose.Options{Sample: *sample, BaseDir: configDir(*cfgPath), ConfigFile: *cfgPath})
	if err != nil {
		return err
	}
	for _, f := range report.Findings {
		fmt.Fprintln(stdout, f)
	}
	fmt.Fprintln(stdout, report.Summary(cfg))
	if n := report.Count(diagnose.Error); n > 0 {
		if sameOutput(stdout, stderr) {
			// A terminal (or 2>&1) shows stdout's list already: each
			// error once.
			return exitError{code: 1, msg: countOf(n, "error") + " (above)"}
		}
		// The errors again on stderr, where a script or a CI log looks
		// for why the exit code is 1.
		lines := []string{countOf(n, "error") + ":"}
		for _, f := range report.Findings {
			if f.Severity == diagnose.Error {
				lines = append(lines, f.String())
			}
		}
		return errors.New(strings.Join(lines, "\n"))
	}
	return nil
}

// countOf writes n things, singular for one: "1 partition", "8
// partitions", "1 retry", "2 retries".
func countOf[N int | int64](n N, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %s", n, pluralOf(thing))
}

// pluralOf is the plural of an English noun of txsink's messages: a
// consonant and y end in ies (retry, entry), the rest add s.
func pluralOf(thing string) string {
	if stem, ok := strings.CutSuffix(thing, "y"); ok && stem != "" && !strings.ContainsRune("aeiou", rune(stem[len(stem)-1])) {
		return stem + "ies"
	}
	return thing + "s"
}

// startAttrs returns the attributes of run's start line: the pipeline,
// the target and what the source reads, from the source's own config
// struct (the command knows the sources it links in): a file source's
// partitions, a Kafka source's brokers, group and topics, a PostgreSQL
// source's slot, its tables or publication, and its snapshot mode.
func startAttrs(cfg *config.Config) ([]any, error) {
	attrs := []any{"pipeline", cfg.Name, "target", cfg.Target.String(), "format", cfg.Source.Format}
	switch cfg.Source.Type {
	case kafka.Type:
		var kc kafka.Config
		if err := source.Decode(cfg.Source.Settings(), &kc); err != nil {
			return nil, err
		}
		return append(attrs, "brokers", kc.Brokers, "group", kc.Group, "topics", cmp.Or(strings.Join(kc.Topics, ","), kc.TopicRegex)), nil
	case postgres.Type:
		var pc postgres.Config
		if err := source.Decode(cfg.Source.Settings(), &pc); err != nil {
			return nil, err
		}
		attrs = append(attrs, "slot", cmp.Or(pc.Slot, postgres.DefaultSlot(cfg.Name)))
		if pc.Publication != "" {
			attrs = append(attrs, "publication", pc.Publication)
		} else {
			attrs = append(attrs, "tables", strings.Join(pc.Tables, ","))
		}
		return append(attrs, "snapshot", cmp.Or(pc.Snapshot, postgres.SnapshotInitial)), nil
	case file.Type:
		var fc file.Config
		if err := source.Decode(cfg.Source.Settings(), &fc); err != nil {
			return nil, err
		}
		return append(attrs, "partitions", len(fc.PartitionPaths())), nil
	}
	return attrs, nil
}
