package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/source"
)

// slotDropper is a source with a replication slot that only this command
// drops (source/postgres): txsink run never does, since the slot holds
// what the target has not committed yet.
type slotDropper interface {
	Slot() string
	DropSlot(ctx context.Context) (bool, error)
}

// cmdDropSlot drops the replication slot of a pipeline's PostgreSQL
// source, for a retired pipeline or one whose data is taken over again.
func cmdDropSlot(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("drop-slot", `txsink drop-slot --config pipeline.yaml

Drops the replication slot of the pipeline's PostgreSQL source (source.slot,
by default txsink_<pipeline name>), which txsink run never drops by itself:
the slot keeps on the server the WAL of every change the target has not
confirmed, so a slot left behind by a retired pipeline fills the server's
disk (or is invalidated at max_slot_wal_keep_size). It refuses while a
pipeline streams from the slot: stop it first.

After the drop the target's progress of the slot cannot be resumed from: to
take the data over again, empty the target tables, forget the progress
(txsink reset) and run again, which creates the slot and copies the tables.

Examples:
  txsink drop-slot --config pipeline.yaml`, stdout)
	cfgPath := fs.String("config", "", "pipeline configuration file (YAML); required")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *cfgPath == "" {
		return usageError{msg: "--config is required (see txsink drop-slot --help)"}
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	d, err := source.Lookup(cfg.Source.Type)
	if err != nil {
		return err
	}
	src, err := d.Open(source.Settings(cfg.Source.Settings()), source.Env{Pipeline: cfg.Name, BaseDir: configDir(*cfgPath), Log: slog.New(slog.NewTextHandler(stderr, nil))})
	if err != nil {
		return err
	}
	defer src.Close()
	sd, ok := src.(slotDropper)
	if !ok {
		return errors.New("the pipeline's source (source.type " + cfg.Source.Type + ") has no replication slot; drop-slot applies to source.type postgres")
	}
	dropped, err := sd.DropSlot(ctx)
	if err != nil {
		return err
	}
	if !dropped {
		fmt.Fprintf(stdout, "there is no replication slot %s; nothing dropped\n", sd.Slot())
		return nil
	}
	fmt.Fprintf(stdout, "dropped the replication slot %s\n", sd.Slot())
	return nil
}
