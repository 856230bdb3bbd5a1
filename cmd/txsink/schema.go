package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/diagnose"
)

func cmdSchema(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("schema", `txsink schema --config pipeline.yaml [--sample N]

Prints, for every target table the pipeline routes a sampled change to,
the CREATE TABLE statement schema.create: missing would create it with:
the columns, types and key the tables entry declares (tables[].columns),
else those the changelog's own records declare (Debezium's schema envelope,
Canal's mysqlType and pkNames), in the target's dialect (docs/schema.md
has the mapping). An entry without a wildcard that declares its columns
is printed even when no sampled change reaches it. A table the target has
already is printed too, marked so. Review the statements and run them yourself, or
let txsink run them with schema.create: missing. The source is sampled as
txsink check samples it; nothing is written, to the target or the source.
Exits 1 when a table cannot be created (a format without types and an
entry without columns, a record without the schema envelope, no key, a
type the target has no column for), saying why, or when no sampled change
reaches a tables entry that declares no columns.

Example:
  txsink schema --config pipeline.yaml > tables.sql`, stdout)
	cfgPath := fs.String("config", "", "pipeline configuration file (YAML); required")
	sample := fs.Int("sample", diagnose.DefaultSample, "records to read of each source file or Kafka partition")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *cfgPath == "" {
		return usageError{msg: "--config is required (see txsink schema --help)"}
	}
	if *sample < 1 {
		return usageError{msg: fmt.Sprintf("--sample %d: want 1 or more records", *sample)}
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	tables, err := diagnose.Schema(ctx, cfg, diagnose.Options{Sample: *sample, BaseDir: configDir(*cfgPath), ConfigFile: *cfgPath})
	if err != nil {
		return err
	}
	failed := 0
	for i, td := range tables {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		head := "-- " + td.Source + " -> " + td.Target.String()
		switch {
		case td.Err != nil:
			failed++
			why, fix := diagnose.Refusal(td.Err)
			fmt.Fprintf(stdout, "%s: %s; %s\n", head, why, fix)
			continue
		case td.Exists:
			head += ": exists already;"
		default:
			head += ":"
		}
		head += " declared by " + td.From
		if td.At != (changelog.Position{}) {
			head += " at " + td.At.String()
		}
		fmt.Fprintln(stdout, head)
		fmt.Fprintln(stdout, strings.Join(td.Statements, ";\n")+";")
	}
	if len(tables) == 0 {
		return exitError{code: 1, msg: "no sampled change is routed to a table (check the tables entries, or sample more with --sample)"}
	}
	if failed > 0 {
		return exitError{code: 1, msg: fmt.Sprintf("%d of %d tables cannot be created; see above", failed, len(tables))}
	}
	return nil
}
