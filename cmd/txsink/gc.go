package main

import (
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/source"
)

// gcPercent is the garbage collector's GOGC for a pipeline run. txsink
// allocates quickly (decoded records) and keeps little (its buffers), so
// at Go's default of 100 the collector ran often over a small heap: 200
// took 15-20% less CPU per event in txsink bench, for about 10 MiB more
// peak RSS.
const gcPercent = 200

// gcHeadroom is what the memory limit allows beyond the configured buffer
// (which holds the unit being committed too): records read and not yet
// buffered, garbage between two collections, the runtime's own. The
// rest of the promised buffer + 64 MiB is left to what is not Go's: the
// binary's own pages (about 17 MiB) and an embedded SQLite's memory
// (about 5 MiB). At 48 MiB a 10.4M-event run into SQLite peaked at
// 82.3 MiB of RSS, over the bound.
const gcHeadroom = 40 << 20

// tuneGC sets the collector for running cfg's pipeline: GOGC 200 with a
// soft memory limit of the configured buffer plus gcHeadroom (and the
// memory of keys' partitions, engine.KeyMemoryBytes), so the
// cheaper collection never costs the memory bound. GOGC or GOMEMLIMIT in
// the environment win: then it changes nothing.
func tuneGC(cfg *config.Config) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(gcPercent)
	debug.SetMemoryLimit(bufferBudget(cfg) + engine.KeyMemoryBytes(cfg) + gcHeadroom)
}

// bufferBudget is the memory cfg lets txsink buffer: the flush buffer; in
// transaction mode the transaction buffer, where reading stops at twice
// its size; with a Debezium transaction topic the joiner, which holds up
// to twice the transaction buffer, in front of the flush buffer.
func bufferBudget(cfg *config.Config) int64 {
	s := cfg.Sink
	switch {
	case joinsBoundaries(cfg):
		return 2*s.TxnBufferSize + s.FlushMaxBytes
	case s.TxnEnabled:
		return 2 * s.TxnBufferSize
	default:
		return s.FlushMaxBytes
	}
}

// joinsBoundaries reports whether cfg's pipeline joins transactions across
// the source's partitions by boundaries of their own (a Debezium
// transaction topic, source.Boundaries): the source is asked, opened
// without reading.
func joinsBoundaries(cfg *config.Config) bool {
	if !cfg.Sink.TxnEnabled {
		return false
	}
	d, err := source.Lookup(cfg.Source.Type)
	if err != nil {
		return false
	}
	src, err := d.Open(cfg.Source.Settings(), source.Env{Log: slog.New(slog.DiscardHandler)})
	return err == nil && source.BoundaryPartition(src) != ""
}
