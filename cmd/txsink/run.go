package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
)

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", `txsink run --config pipeline.yaml

Applies the pipeline's changelog files to its target and exits 0 once every
file is consumed (with source.follow: true it keeps tailing until SIGINT or
SIGTERM). Run it again with the same name and files: it resumes after the
last commit and applies nothing twice. On SIGINT/SIGTERM it commits what it
has read and exits 0.

Example:
  txsink run --config pipeline.yaml --log-level debug`, stderr)
	cfgPath := fs.String("config", "", "pipeline configuration file (YAML); required")
	logger := logFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *cfgPath == "" {
		return usageError{msg: "--config is required (see txsink run --help)"}
	}
	log, err := logger(stderr)
	if err != nil {
		return err
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	log.Info("starting", "pipeline", cfg.Name, "target", cfg.Target.String(), "format", cfg.Source.Format, "partitions", len(cfg.Source.Paths))
	e, err := engine.New(ctx, cfg, engine.WithLogger(log), engine.WithBaseDir(configDir(*cfgPath)))
	if err != nil {
		return err
	}
	defer e.Close()
	runErr := e.Run(ctx, engine.RunOptions{})
	st := e.Stats()
	fmt.Fprintln(stdout, summaryLine(cfg.Name, st, time.Since(st.Started)))
	if runErr != nil {
		return runErr
	}
	log.Info("stopped", "pipeline", cfg.Name, "commits", st.Commits)
	return nil
}

// summaryLine renders the one-line summary printed when a run ends.
func summaryLine(name string, st engine.Stats, took time.Duration) string {
	var events int64
	kinds := make([]string, 0, 4)
	for _, k := range []changelog.Kind{changelog.Insert, changelog.UpdateBefore, changelog.UpdateAfter, changelog.Delete} {
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
	fmt.Fprintf(&b, "%s: %d events", name, events)
	if len(kinds) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(kinds, ", "))
	}
	fmt.Fprintf(&b, " -> %d rows written (%d upserted, %d deleted, %d inserted) in %d commits",
		written, st.Upserted, st.Deleted, st.Inserted, st.Commits)
	if st.Skipped > 0 {
		fmt.Fprintf(&b, ", %d skipped", st.Skipped)
	}
	if st.DeadLetters > 0 {
		fmt.Fprintf(&b, ", %d dead-lettered (txsink dead-letters lists them)", st.DeadLetters)
	}
	if st.Retries > 0 {
		fmt.Fprintf(&b, ", %d retries", st.Retries)
	}
	fmt.Fprintf(&b, ", %s, %.0f events/s", took.Round(time.Millisecond), rate)
	return b.String()
}

func cmdCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("check", `txsink check --config pipeline.yaml

Validates the configuration and checks it against the target without writing
anything: every target table exists, its PRIMARY KEY agrees with the
configured primary-key, and a table without a key is declared append-only.
Exits 0 when all is well, 1 with one line per problem otherwise.

Example:
  txsink check --config pipeline.yaml`, stderr)
	cfgPath := fs.String("config", "", "pipeline configuration file (YAML); required")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *cfgPath == "" {
		return usageError{msg: "--config is required (see txsink check --help)"}
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	if err := engine.Check(ctx, cfg, engine.WithBaseDir(configDir(*cfgPath))); err != nil {
		return err
	}
	names := make([]string, 0, len(cfg.Tables))
	for _, t := range cfg.Tables {
		names = append(names, t.Source)
	}
	sort.Strings(names)
	fmt.Fprintf(stdout, "%s: configuration OK; target %s; tables %s\n", cfg.Name, cfg.Target.String(), strings.Join(names, ", "))
	return nil
}
