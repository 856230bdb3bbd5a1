package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/sink"
)

// partitionFlags collects repeated --partition flags.
type partitionFlags []string

func (p *partitionFlags) String() string { return strings.Join(*p, ",") }
func (p *partitionFlags) Set(s string) error {
	*p = append(*p, s)
	return nil
}

// cmdReset forgets a pipeline's progress: the one supported way to read a
// partition again from its start.
func cmdReset(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("reset", `txsink reset --config pipeline.yaml [--partition P]... [--dry-run]

Forgets how far the pipeline has read: deletes its progress rows in the
target (txsink_progress), so that the next run reads those partitions from
their start (a file source, a NATS stream) or from source.start (Kafka). Without
--partition, every partition of the pipeline is forgotten. It refuses while
a running txsink instance holds one of the partitions: stop it first. With
--dry-run it prints what it would delete and deletes nothing.

Nothing else changes: the target tables keep their rows, so a rerun applies
the changelog again over them (upserts and deletes end the same; rows of
append-only and history tables are inserted again).

Examples:
  txsink reset --config pipeline.yaml --partition day1.jsonl --dry-run
  txsink reset --config pipeline.yaml`, stdout)
	cfgPath := fs.String("config", "", "pipeline configuration file (YAML); required")
	var parts partitionFlags
	fs.Var(&parts, "partition", "a partition to forget, as txsink run's messages and /status name it; repeat for several (default: all)")
	dryRun := fs.Bool("dry-run", false, "print what would be deleted; delete nothing")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *cfgPath == "" {
		return usageError{msg: "--config is required (see txsink reset --help)"}
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	open := sink.Open
	if *dryRun {
		open = sink.OpenReadOnly
	}
	s, err := open(ctx, cfg.Target.URL, configDir(*cfgPath))
	if err != nil {
		return err
	}
	defer s.Close()
	t, ok := s.(sink.ProgressKeeper)
	if !ok {
		return fmt.Errorf("target url: this target (%T) cannot forget stored progress; txsink reset needs one that can", s)
	}
	lk, _ := s.(sink.Locker)
	if lk == nil {
		lk = noLocks{}
	}
	stored, err := t.Stored(ctx, cfg.Name)
	if err != nil {
		return err
	}
	var names []string
	for _, s := range stored {
		names = append(names, s.Partition)
	}
	if len(stored) == 0 {
		fmt.Fprintf(stdout, "%s: no stored progress; nothing to reset\n", cfg.Name)
		return nil
	}
	want := []string(parts)
	for _, p := range want {
		if !slices.Contains(names, p) {
			return fmt.Errorf("pipeline %s has no stored progress for partition %q; it has progress for: %s", cfg.Name, p, strings.Join(quoteAll(names), ", "))
		}
	}
	if len(want) == 0 {
		want = names
	}
	held, known, err := lk.Held(ctx, cfg.Name, want)
	if err != nil {
		return err
	}
	if len(held) > 0 {
		return fmt.Errorf("partition %s of pipeline %s is held by a running txsink instance; stop it first, then reset", strings.Join(quoteAll(held), ", "), cfg.Name)
	}
	var todo []sink.Stored
	for _, s := range stored {
		if slices.Contains(want, s.Partition) {
			todo = append(todo, s)
		}
	}
	verb := "forgot"
	if *dryRun {
		verb = "would forget"
	} else {
		// Holding the locks keeps a second reset out; an instance that
		// starts meanwhile claims afresh and finds no row.
		if busy, err := lk.Hold(ctx, cfg.Name, want); err != nil {
			return err
		} else if len(busy) > 0 {
			return fmt.Errorf("partition %s of pipeline %s is held by a running txsink instance; stop it first, then reset", strings.Join(quoteAll(busy), ", "), cfg.Name)
		}
		if todo, err = t.Forget(ctx, cfg.Name, want); err != nil {
			return err
		}
	}
	for _, s := range todo {
		fmt.Fprintf(stdout, "%s: %s partition %s at byte %d (line %d), stored %s\n", cfg.Name, verb, s.Partition, s.Offset, s.Seq, s.UpdatedAt)
	}
	if !known {
		fmt.Fprintf(stderr, "note: this database cannot tell whether an instance is running (no locks); one that is will stop at its next commit\n")
	}
	if *dryRun {
		fmt.Fprintf(stdout, "%s: dry run; nothing deleted\n", cfg.Name)
	}
	return nil
}

// noLocks is the Locker of a target without locks: it holds nothing and
// cannot tell whether an instance runs.
type noLocks struct{}

func (noLocks) Hold(context.Context, string, []string) ([]string, error) { return nil, nil }
func (noLocks) Release(context.Context, string, []string) error          { return nil }
func (noLocks) Held(context.Context, string, []string) ([]string, bool, error) {
	return nil, false, nil
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}
