package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/sink"
)

func cmdDeadLetters(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("dead-letters", `txsink dead-letters --config pipeline.yaml [--raw]

Lists what the pipeline quarantined under bad-input: dead-letter: for each
source transaction (or record) its position, transaction id, time and the
reason it was refused; with --raw, the record as read (or, for a whole
transaction, its changes as txsink-json lines, which can be fixed and fed
again through a txsink-json pipeline). Reads the target; writes nothing.

Example:
  txsink dead-letters --config pipeline.yaml --raw`, stdout)
	cfgPath := fs.String("config", "", "pipeline configuration file (YAML); required")
	raw := fs.Bool("raw", false, "print each quarantined record as well")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *cfgPath == "" {
		return usageError{msg: "--config is required (see txsink dead-letters --help)"}
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	s, err := sink.OpenReadOnly(ctx, cfg.Target.URL, configDir(*cfgPath))
	if err != nil {
		return err
	}
	defer s.Close()
	t, ok := s.(sink.DeadLetterer)
	if !ok {
		return fmt.Errorf("target url: this target (%T) keeps no dead letters", s)
	}
	rows, err := t.DeadLetters(ctx, cfg.Name)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		fmt.Fprintf(stdout, "%s: no dead letters\n", cfg.Name)
		return nil
	}
	for _, r := range rows {
		txn := ""
		if r.TxnID != "" {
			txn = " txn " + r.TxnID
		}
		// The reason names the record's position first, as the run's
		// error did; the line already says it.
		where := fmt.Sprintf("%s:%d", r.Partition, r.Seq)
		reason := strings.TrimPrefix(r.Reason, where+": ")
		fmt.Fprintf(stdout, "#%d %s%s at %s: %s\n", r.ID, where, txn, r.CreatedAt, reason)
		if *raw {
			for _, line := range strings.Split(strings.TrimRight(string(r.Raw), "\n"), "\n") {
				fmt.Fprintf(stdout, "    %s\n", line)
			}
		}
	}
	fmt.Fprintf(stdout, "%s: %s\n", cfg.Name, countOf(len(rows), "dead letter"))
	return nil
}
