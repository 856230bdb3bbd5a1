// Command txsink applies a changelog (the inserts, updates and deletes that
// CDC tools capture) to a serving database, so that it always holds the
// source's current state: reduced per key, one atomic transaction per
// flush, exactly once.
//
//	txsink demo                          # embedded SQLite, no server needed
//	txsink run   --config pipeline.yaml  # apply a changelog (files, Kafka or NATS) to a database
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
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/format/formats"
	"github.com/txsink/txsink/source"
	// Every source type, registered by name (see package source).
	_ "github.com/txsink/txsink/sink/sinks"
	_ "github.com/txsink/txsink/source/sources"
)

// config validates source.type and source.format against the plug-ins
// linked in here.
func init() { config.SourceTypes, config.Formats = source.Names, formats.Names }

const usage = `txsink applies a database changelog (Debezium, Canal, Maxwell, OGG, Flink
changelog-json, txsink-json), read from files, Kafka or NATS JetStream, to
MySQL/MariaDB, PostgreSQL or SQLite: the last change per key, one atomic
transaction per flush (or per batch of whole source transactions), exactly
once.

Usage:
  txsink demo  [--dir DIR] [--orders N]     try it on an embedded SQLite database
  txsink run   --config pipeline.yaml       apply the changelog (files: exit when consumed)
  txsink check --config pipeline.yaml       diagnose config, target and a source sample; writes nothing
  txsink schema --config pipeline.yaml      print the CREATE TABLE of each routed table, from the changelog
  txsink dead-letters --config pipeline.yaml  list what bad-input: dead-letter quarantined
  txsink reset --config pipeline.yaml [--partition P]  forget progress: read again from the start
  txsink drop-slot --config pipeline.yaml   drop a PostgreSQL source's replication slot (never automatic)
  txsink bench [--workload W] [--target URL] measure throughput against the database's bulk load
  txsink version

Examples:
  go run ./cmd/txsink demo
  txsink run --config pipeline.yaml --log-level debug
  TXSINK_DB_PASSWORD=secret txsink run --config pipeline.yaml   # url: mysql://app:${TXSINK_DB_PASSWORD}@...

Run 'txsink COMMAND --help' (or 'txsink help COMMAND') for a command's flags.
docs/config.md lists every configuration key.
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
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "--help":
		if len(rest) == 0 {
			fmt.Fprint(stdout, usage)
			return 0
		}
		// txsink help run: the command's own help.
		name, rest = rest[0], []string{"--help"}
	case "--version":
		name = "version"
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "txsink: unknown command %q (see txsink --help)\n", name)
		return 2
	}
	err := cmd(ctx, rest, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var xe exitError
	if errors.As(err, &xe) {
		fmt.Fprintf(stderr, "txsink %s: %s\n", name, xe.msg)
		return xe.code
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "txsink %s: %s\n", name, ue.msg)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "txsink %s: %v\n", name, err)
		return 1
	}
	return 0
}

// commands maps each subcommand to the function that runs it.
var commands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) error{
	"run":          cmdRun,
	"check":        cmdCheck,
	"dead-letters": cmdDeadLetters,
	"reset":        cmdReset,
	"drop-slot":    cmdDropSlot,
	"schema":       cmdSchema,
	"demo":         cmdDemo,
	"bench":        cmdBench,
	"version":      cmdVersion,
}

// usageError is a mistake in the command line: exit code 2.
type usageError struct {
	msg string
}

func (u usageError) Error() string { return u.msg }

// exitError ends the command with an exit code of its own (not 1), after
// printing msg.
type exitError struct {
	code int
	msg  string
}

func (x exitError) Error() string { return x.msg }

// logFlags adds --log-level and --log-format to fs and returns a function
// that builds the logger.
func logFlags(fs *flagSet) func(w io.Writer) (*slog.Logger, error) {
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

// parseFlags parses args. --help prints the command's help on stdout
// (flag.ErrHelp: exit 0); a bad flag is a usage error of one line that
// points at --help, not the whole help.
func parseFlags(fs *flagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(fs)
			return err
		}
		return usageError{msg: fmt.Sprintf("%s (see txsink %s --help)", doubleDash(err.Error()), fs.Name())}
	}
	if fs.NArg() > 0 {
		return usageError{msg: fmt.Sprintf("unexpected argument %q (flags only; see txsink %s --help)", fs.Arg(0), fs.Name())}
	}
	return nil
}

// flagNameRE finds a flag name as the flag package writes it in its
// errors ("-config"), to be written as the help and docs do ("--config").
var flagNameRE = regexp.MustCompile(`(^|[\s:])-([a-zA-Z][\w-]*)`)

func doubleDash(msg string) string { return flagNameRE.ReplaceAllString(msg, "$1--$2") }

// flagSet is a command's flags with its help text (its first line the
// synopsis), which printHelp writes above the flags.
type flagSet struct {
	*flag.FlagSet
	help string
	out  io.Writer
}

// newFlagSet returns the flag set of command name, whose help is help
// followed by the flags. The flag package prints nothing itself: help goes
// to stdout on --help, a bad flag is one line on stderr (parseFlags).
func newFlagSet(name, help string, stdout io.Writer) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, help: help, out: stdout}
}

// printHelp writes fs's help with its flags in the double-dash form the
// usage, the README and the docs use (Go's PrintDefaults writes "-config").
func printHelp(fs *flagSet) {
	w := fs.out
	fmt.Fprintf(w, "%s\n", fs.help)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "\nFlags:\n")
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if typ != "" {
			line += " " + typ
		}
		fmt.Fprintf(w, "%s\n    \t%s", line, strings.ReplaceAll(usage, "\n", "\n    \t"))
		if d := f.DefValue; d != "" && d != "0" && d != "false" && d != "[]" {
			if typ == "string" {
				d = strconv.Quote(d)
			}
			fmt.Fprintf(w, " (default %s)", d)
		}
		fmt.Fprintln(w)
	})
}

func configDir(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Dir(path)
	}
	return filepath.Dir(abs)
}
