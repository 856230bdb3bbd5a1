// Package observe is what a running pipeline tells those who watch it:
// the Status snapshot it reports (for /status, the gauges and the progress
// bar) and the hooks it calls at each change, commit, retry and stop. The
// engine fills the one and calls the other; observers (package metrics,
// package statushttp) import this package, not the engine.
package observe

import (
	"fmt"
	"time"

	"github.com/txsink/txsink/changelog"
)

// Hook is any value that implements one or more of the Hook* interfaces
// below; engine.WithHooks installs them. Observability adapters (package metrics)
// are hooks, so the engine knows nothing of Prometheus.
//
// Hooks are called synchronously, in the order they were installed, and
// calls of one method never overlap: OnChange on the goroutine that adds
// changes (Run's loop), OnCommit and OnRetry on the goroutine that commits
// (while Run runs, its committer, so they may run at the same time as
// OnChange), OnStop once at the end. They must be quick and must not call
// back into the engine (Status, which takes a lock of its own, is the
// exception).
type Hook any

// HookChange is told of every change read, before it is buffered: the
// change's kind, table and partition feed "events in" counters. The
// change is the hook's only during the call: its memory, rows and values
// included, is used again for later changes (see changelog.Arena), so a
// hook copies what it keeps.
type HookChange interface {
	OnChange(c *changelog.Change)
}

// HookCommit is told of every commit attempt of a unit, after it
// succeeded or finally failed.
type HookCommit interface {
	OnCommit(CommitInfo)
}

// CommitInfo describes one commit attempt.
type CommitInfo struct {
	// Reason says what triggered the commit ("max-rows", "interval",
	// "explicit", or in transaction mode "interval", "buffer-full", "flush",
	// "size", or "recycle": a target transaction kept open for parts loaded
	// ahead of the commit reached 80% of the target's timeout).
	Reason string
	// Changes is the number of source changes the unit consumed.
	Changes int
	// Upserted, Deleted and Inserted count the rows written after reduction.
	Upserted, Deleted, Inserted int
	// GuardRefused counts the rows of the unit a version guard refused
	// (the stored row was newer); DeletesIgnored the deletes of tables
	// with delete: ignore it consumed.
	GuardRefused, DeletesIgnored int
	// Txns is the number of whole source transactions in the unit
	// (transaction mode; 0 otherwise).
	Txns int
	// Took is how long the commit took, retries included.
	Took time.Duration
	// Progress holds the positions the unit advanced to.
	Progress []changelog.Position
	// Err is nil when the unit was committed.
	Err error
}

// HookRetry is told of every transient target error that is retried.
type HookRetry interface {
	OnRetry(attempt int, wait time.Duration, err error)
}

// HookStop is told once, when Run ends: err is nil after a clean end.
type HookStop interface {
	OnStop(err error)
}

// OpenTxn is a source transaction read in part, its end not yet
// (transaction mode).
type OpenTxn struct {
	// Partition is the partition it is read from.
	Partition string `json:"partition"`
	// TxnID is its transaction id, "" when the format carries none.
	TxnID string `json:"txn"`
	// StartOffset and StartSeq are where its first change was read (for
	// a file, the byte offset past that record and its line): a rerun
	// reads it again from the stored progress, which is before it.
	StartOffset int64 `json:"start_offset"`
	StartSeq    int64 `json:"start_seq"`
	// Changes counts its changes read so far.
	Changes int `json:"changes"`
}

// Start returns where its first change was read.
func (o OpenTxn) Start() changelog.Position {
	return changelog.Position{Partition: o.Partition, Offset: o.StartOffset, Seq: o.StartSeq}
}

// String says which transaction it is and where it starts:
// "transaction t9 from p0.jsonl:3 (2 changes)".
func (o OpenTxn) String() string {
	id := "a transaction without an id"
	if o.TxnID != "" {
		id = "transaction " + o.TxnID
	}
	changes := "changes"
	if o.Changes == 1 {
		changes = "change"
	}
	return fmt.Sprintf("%s from %s (%d %s)", id, o.Start(), o.Changes, changes)
}

// State is where a pipeline is in its life.
type State string

// The pipeline states Status reports.
const (
	StateStarting State = "starting" // opened, not reading yet
	StateRunning  State = "running"  // reading and committing
	StateDegraded State = "degraded" // running, but the unit being committed failed and is retried (Status.Retrying says why)
	StateStopping State = "stopping" // committing what it has before it stops
	StateStopped  State = "stopped"  // ended cleanly
	StateFailed   State = "failed"   // ended with an error (Status.Error says which)
)

// Status is a snapshot of a pipeline for /status and gauges. It is safe
// to call from any goroutine.
type Status struct {
	Pipeline string `json:"pipeline"`
	State    State  `json:"state"`
	// Error is the error the pipeline stopped with (StateFailed).
	Error string `json:"error,omitempty"`
	// Retrying, while the pipeline runs or stops, describes the unit
	// whose commit failed with a transient error (a target that is down,
	// a lost connection, a deadlock) and is being retried: the state is
	// then StateDegraded (or StateStopping). Nil otherwise.
	Retrying *RetryStatus `json:"retrying,omitempty"`
	// Partitions lists each partition, sorted by name.
	Partitions []PartitionStatus `json:"partitions"`
	// BufferedBytes is what the buffer holds now (plain mode: the memory
	// its rows take after reduction, as max-bytes counts it; transaction
	// mode: the records' bytes of every change not yet committed).
	BufferedBytes int64 `json:"buffered_bytes"`
	// OpenTxns is the number of unfinished source transactions
	// (transaction mode).
	OpenTxns int `json:"open_txns"`
	// Open lists them, one per partition at most, with where each
	// starts: while the pipeline runs, the transactions being read (as of
	// the last batch of records taken); once it has stopped, those it left
	// open, which the next run reads again from the stored progress.
	Open []OpenTxn `json:"open_transactions,omitempty"`
	// LastCommit is when the last unit was committed (zero before one).
	LastCommit time.Time `json:"last_commit"`
	// Stats holds the pipeline's counters.
	Stats StatsSnapshot `json:"stats"`
	// StarRocks holds a StarRocks target's figures (nil for the other
	// targets).
	StarRocks *StarRocksStatus `json:"starrocks,omitempty"`
}

// RetryStatus describes the retries of one unit (see Status.Retrying).
type RetryStatus struct {
	// Attempts counts the unit's attempts that failed so far.
	Attempts int `json:"attempts"`
	// Since is when its first attempt failed.
	Since time.Time `json:"since"`
	// LastError is the error of its last attempt.
	LastError string `json:"last_error"`
	// Next is when its next attempt is due.
	Next time.Time `json:"next_attempt"`
}

// PartitionStatus is one partition in a Status.
type PartitionStatus struct {
	Name string `json:"name"`
	// Unit is what the offsets count: "bytes" (a file) or "records" (a
	// Kafka partition, whose offsets number its records; a NATS stream,
	// whose offsets are stream sequences + 1).
	Unit string `json:"unit"`
	// Committed is the position stored in the target (where a restart
	// resumes).
	Committed int64 `json:"committed_offset"`
	// CommittedSeq is the record number (line) of Committed.
	CommittedSeq int64 `json:"committed_seq"`
	// Read is how far the source has been read (offset after the last
	// record read).
	Read int64 `json:"read_offset"`
	// End is the end of the source when known (a file's size, a Kafka
	// partition's high watermark), else -1; End - Committed is the
	// partition's lag, in Unit.
	End int64 `json:"end_offset"`
	// SlotLagBytes, for a partition read from a PostgreSQL replication
	// slot, is the WAL the server keeps for the slot beyond what the
	// target confirmed; nil for other sources, or before it is known.
	SlotLagBytes *int64 `json:"slot_lag_bytes,omitempty"`
	// LastCommit is when the partition's progress last moved.
	LastCommit time.Time `json:"last_commit"`
}

// StatsSnapshot is Stats in a form that encodes to JSON.
type StatsSnapshot struct {
	Events  map[string]int64 `json:"events"`
	Skipped int64            `json:"skipped"`
	// SchemaChanges and Messages count the records that carry no row,
	// skipped: schema changes (DDL) and logical decoding messages.
	SchemaChanges int64 `json:"schema_changes"`
	Messages      int64 `json:"messages"`
	Upserted      int64 `json:"upserted"`
	Deleted       int64 `json:"deleted"`
	Inserted      int64 `json:"inserted"`
	Commits       int64 `json:"commits"`
	Txns          int64 `json:"txns"`
	Retries       int64 `json:"retries"`
	// DeadLetters counts records or source transactions quarantined
	// (bad-input: dead-letter).
	DeadLetters int64 `json:"dead_letters"`
	Bytes       int64 `json:"bytes_read"`
	// GuardRefused counts the upserts and deletes a version guard
	// (tables[].version-column) refused: the stored row was newer.
	GuardRefused int64 `json:"guard_refused"`
	// DeletesIgnored counts the deletes of tables with delete: ignore.
	DeletesIgnored int64 `json:"deletes_ignored"`
	// Copies counts the changes dropped as copies published again by the
	// source's producer (see engine.Stats.Copies).
	Copies int64 `json:"copies_dropped"`
}
