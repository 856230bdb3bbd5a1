// Command txsink applies a changelog (the inserts, updates and deletes that
// CDC tools capture) to a serving database, so that it always holds the
// source's current state: reduced per key, one atomic transaction per
// flush, exactly once.
//
//	txsink demo                          # embedded SQLite, no server needed
//	txsink run   --config pipeline.yaml  # apply a changelog (files or Kafka) to a database
//	txsink check --config pipeline.yaml  # validate config against the target; writes nothing
//	txsink reset --config pipeline.yaml  # forget progress, so the next run reads from the start
//	txsink version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"
)

const usage = `txsink applies a database changelog (Debezium, Canal, Maxwell, OGG, Flink
changelog-json, txsink-json), read from files or Kafka, to MySQL/MariaDB,
PostgreSQL or SQLite: the last change per key, one atomic transaction per flush
(or per batch of whole source transactions), exactly once.

Usage:
  txsink demo  [--dir DIR] [--orders N]     try it on an embedded SQLite database
  txsink run   --config pipeline.yaml       apply the changelog (files: exit when consumed)
  txsink check --config pipeline.yaml       diagnose config, target and a source sample; writes nothing
  txsink dead-letters --config pipeline.yaml  list what bad-input: dead-letter quarantined
  txsink reset --config pipeline.yaml [--partition P]  forget progress: read again from the start
  txsink bench [--workload W] [--target URL] measure throughput against the database's bulk load
  txsink version

Examples:
  go run ./cmd/txsink demo
  txsink run --config pipeline.yaml --log-level debug
  TXSINK_DB_PASSWORD=secret txsink run --config pipeline.yaml   # url: mysql://app:${TXSINK_DB_PASSWORD}@...

Run 'txsink COMMAND --help' for a command's flags. docs/config.md lists every
configuration key.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the exit, so tests can call it.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// After the first signal, a second one ends the process at once.
		<-ctx.Done()
		stop()
	}()
	var err error
	switch args[0] {
	case "run":
		err = cmdRun(ctx, args[1:], stdout, stderr)
	case "check":
		err = cmdCheck(ctx, args[1:], stdout, stderr)
	case "dead-letters":
		err = cmdDeadLetters(ctx, args[1:], stdout, stderr)
	case "reset":
		err = cmdReset(ctx, args[1:], stdout, stderr)
	case "demo":
		err = cmdDemo(ctx, args[1:], stdout, stderr)
	case "bench":
		err = cmdBench(ctx, args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "txsink", version())
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "txsink: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var xe exitError
	if errors.As(err, &xe) {
		fmt.Fprintf(stderr, "txsink %s: %s\n", args[0], xe.msg)
		return xe.code
	}
	var ue usageError
	if errors.As(err, &ue) {
		if !ue.printed {
			fmt.Fprintf(stderr, "txsink %s: %s\n", args[0], ue.msg)
		}
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "txsink %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// usageError is a mistake in the command line: exit code 2. printed says
// the flag package has shown it already.
type usageError struct {
	msg     string
	printed bool
}

func (u usageError) Error() string { return u.msg }

// exitError ends the command with an exit code of its own (not 1), after
// printing msg.
type exitError struct {
	code int
	msg  string
}

func (x exitError) Error() string { return x.msg }

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// logFlags adds --log-level and --log-format to fs and returns a function
// that builds the logger.
func logFlags(fs *flag.FlagSet) func(w io.Writer) (*slog.Logger, error) {
	level := fs.String("log-level", "info", "log level: debug, info, warn, error")
	formatName := fs.String("log-format", "text", "log format: text or json")
	return func(w io.Writer) (*slog.Logger, error) {
		var l slog.Level
		if err := l.UnmarshalText([]byte(*level)); err != nil {
			return nil, usageError{msg: fmt.Sprintf("--log-level %q: want debug, info, warn or error", *level)}
		}
		opts := &slog.HandlerOptions{Level: l}
		switch *formatName {
		case "text":
			return slog.New(slog.NewTextHandler(w, opts)), nil
		case "json":
			return slog.New(slog.NewJSONHandler(w, opts)), nil
		}
		return nil, usageError{msg: fmt.Sprintf("--log-format %q: want text or json", *formatName)}
	}
}

// parseFlags parses args; a bad flag is a usage error, already printed
// with the command's usage by the flag package.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{msg: err.Error(), printed: true}
	}
	if fs.NArg() > 0 {
		return usageError{msg: fmt.Sprintf("unexpected argument %q (flags only; see --help)", fs.Arg(0))}
	}
	return nil
}

func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "%s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

func configDir(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Dir(path)
	}
	return filepath.Dir(abs)
}
