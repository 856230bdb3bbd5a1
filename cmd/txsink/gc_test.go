package main

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/txsink/txsink/config"
)

func TestBufferBudget(t *testing.T) {
	for _, tc := range []struct {
		name  string
		txn   bool
		topic string
		want  int64
	}{
		{"plain: the flush buffer", false, "", 16 << 20},
		{"transaction mode: twice the transaction buffer", true, "", 2 * 128 << 20},
		{"transaction topic: the joiner and the flush buffer", true, "dbz.transaction", 2*128<<20 + 16<<20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Sink.TxnEnabled = tc.txn
			cfg.Source.Type = "kafka"
			cfg.Source.Set("transaction-topic", tc.topic)
			if got := bufferBudget(&cfg); got != tc.want {
				t.Errorf("bufferBudget = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestTuneGC(t *testing.T) {
	// tuneGC sets process-wide state: put it back whatever happens.
	prevPercent := debug.SetGCPercent(100)
	prevLimit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(prevPercent)
		debug.SetMemoryLimit(prevLimit)
	})
	cfg := config.Default()

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	tuneGC(&cfg)
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("GOGC after tuneGC = %d, want %d", got, gcPercent)
	}
	if got, want := debug.SetMemoryLimit(math.MaxInt64), cfg.Sink.FlushMaxBytes+gcHeadroom; got != want {
		t.Errorf("memory limit after tuneGC = %d, want %d", got, want)
	}

	// A source of several partitions: room for the memory of keys'
	// partitions too, none for it when it is off.
	kafka := config.Default()
	kafka.Source.Type = "kafka"
	tuneGC(&kafka)
	if got, want := debug.SetMemoryLimit(math.MaxInt64), kafka.Sink.FlushMaxBytes+34*1_000_000+8192*24+gcHeadroom; got != want {
		t.Errorf("memory limit for a Kafka source = %d, want %d", got, want)
	}
	kafka.Sink.KeyPartitionsRemember = 0
	tuneGC(&kafka)
	if got, want := debug.SetMemoryLimit(math.MaxInt64), kafka.Sink.FlushMaxBytes+gcHeadroom; got != want {
		t.Errorf("memory limit for a Kafka source, key-partitions.remember 0 = %d, want %d", got, want)
	}
	debug.SetGCPercent(100)

	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(env+" set", func(t *testing.T) {
			t.Setenv(env, "150")
			tuneGC(&cfg)
			if got := debug.SetGCPercent(100); got != 100 {
				t.Errorf("GOGC after tuneGC = %d, want the user's setting left alone", got)
			}
			if got := debug.SetMemoryLimit(math.MaxInt64); got != math.MaxInt64 {
				t.Errorf("memory limit after tuneGC = %d, want none", got)
			}
		})
	}
}
