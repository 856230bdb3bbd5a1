package txn

import (
	"fmt"
	"time"
)

// Config holds the knobs of source-transaction mode. The names follow the
// StarRocks connector's options (seed 001); package config turns the YAML
// into this struct and owns the defaults, including the automatic
// mini-switch interval, so every field here is taken literally.
type Config struct {
	// CommitInterval is the least time between two timer-driven commits
	// (YAML "buffer-flush.interval"). 0 turns the timer off: plans are then
	// cut only when memory is short (BufferSize) or on an explicit flush.
	// It also bounds how long min-switch-bytes can hold a partition's
	// finished transactions back: a switch is forced once a whole
	// CommitInterval has passed since the partition's last switch.
	CommitInterval time.Duration
	// MiniSwitchInterval is the least time between two switches (freezes)
	// of one partition's active chunk (YAML
	// "transaction.multi-table.mini-switch-interval-ms", resolved: package
	// config turns -1 into a duration). Finished source transactions that
	// end inside it stay in the active chunk and freeze together with the
	// next ones: N source transactions to 1 chunk. 0 switches at every
	// transaction end. It is also how long a clean, idle active chunk waits
	// before Tick freezes it (the source-idle fallback). Must be >= 0.
	MiniSwitchInterval time.Duration
	// MinSwitchBytes is how many bytes a partition's active chunk must hold
	// before a switch at a transaction end (YAML
	// "transaction.multi-table.min-switch-bytes"). <= 0 disables the
	// threshold. It is bypassed, as in the seed, when a whole CommitInterval
	// has passed since the partition's last switch, when the buffer is at
	// least half full (BufferSize/2), and by the idle fallback.
	MinSwitchBytes int64
	// BufferSize is the soft limit on buffered bytes over all partitions
	// and tables (YAML "transaction.multi-table.buffer-size"). At BufferSize
	// every finished transaction freezes at once and Ready cuts a plan
	// without waiting for CommitInterval; at 2×BufferSize Step asks the
	// engine to stop reading (ErrBackPressure). Must be > 0.
	BufferSize int64
	// MaxTxnBytes refuses a single open source transaction whose changes'
	// Size would grow past it: Step returns an *Error wrapping
	// ErrMaxTxnBytes. 0 means unlimited: an open transaction is then
	// bounded only by the heap, because an unfinished transaction can
	// neither be committed nor dropped to make room. The engine bounds
	// transactions by the memory their decoded changes take
	// (changelog.Change.MemBytes, YAML
	// "transaction.multi-table.max-txn-bytes") rather than by Size, the
	// records' length, and leaves this 0.
	MaxTxnBytes int64
	// CommitRows and CommitBytes cut a plan as soon as the finished
	// transactions not yet committed hold that many rows or bytes (YAML
	// "buffer-flush.max-rows" and "buffer-flush.max-bytes"): Ready then
	// freezes every finished transaction, without waiting for
	// MiniSwitchInterval, MinSwitchBytes or CommitInterval. Commits of a
	// bounded size keep the target busy while the next plan is read, as in
	// plain mode; a plan still holds whole transactions only. 0 turns a
	// trigger off.
	//
	// CommitRows counts rows. Step counts the changes that can become a
	// row write: an insert, an update's UpdateAfter and a delete count one
	// each, while an UpdateBefore (its UpdateAfter is the row) and an
	// EndTxn marker (no row) count zero, so an update is one row (counting
	// both images and the END made transaction mode commit over twice as
	// often as plain mode at the same setting). The Machine knows no keys,
	// so Step counts before per-key reduction; the engine, which knows
	// them, steps with StepCounted and counts a key's later changes zero,
	// so that max-rows counts rows after reduction, as in plain mode
	// (where counting before reduction made transaction mode commit 1.6
	// times as often on the transactional bench).
	CommitRows  int
	CommitBytes int64
}

// DefaultConfig returns the seed's defaults with a one second commit
// interval: BufferSize 128 MiB, MinSwitchBytes 1 MiB, MaxTxnBytes 0
// (unlimited) and the automatic mini-switch interval for 1s, which is 100ms
// (package config: min(1s, max(100ms, interval/10))).
func DefaultConfig() Config {
	return Config{
		CommitInterval:     time.Second,
		MiniSwitchInterval: 100 * time.Millisecond,
		MinSwitchBytes:     1 << 20,
		BufferSize:         128 << 20,
	}
}

// validate names the YAML key of the first wrong field.
func (c Config) validate() error {
	switch {
	case c.CommitInterval < 0:
		return fmt.Errorf("txn: sink.buffer-flush.interval is %v; set it to 0 or more", c.CommitInterval)
	case c.MiniSwitchInterval < 0:
		return fmt.Errorf("txn: sink.transaction.multi-table.mini-switch-interval-ms is %v; resolve -1 (automatic) before calling txn.New, or set 0 or more", c.MiniSwitchInterval)
	case c.BufferSize <= 0:
		return fmt.Errorf("txn: sink.transaction.multi-table.buffer-size is %d; set it to at least 1 byte, such as 128MiB", c.BufferSize)
	case c.MaxTxnBytes < 0:
		return fmt.Errorf("txn: sink.transaction.multi-table.max-txn-bytes is %d; set it to 0 (unlimited) or more", c.MaxTxnBytes)
	case c.CommitRows < 0:
		return fmt.Errorf("txn: sink.buffer-flush.max-rows is %d; set it to 0 (off) or more", c.CommitRows)
	case c.CommitBytes < 0:
		return fmt.Errorf("txn: sink.buffer-flush.max-bytes is %d; set it to 0 (off) or more", c.CommitBytes)
	}
	return nil
}
