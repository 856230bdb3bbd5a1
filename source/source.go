// Package source defines what txsink reads changelogs from, in the manner
// of database/sql/driver: a Driver per source type, registered by name; the
// Source it opens; and the Readers of raw records, each tagged with the
// Position that resuming after it needs.
//
// A source only moves bytes. It does not parse records (package format does)
// and it does not remember progress: the engine writes each partition's
// Position to the target in the same transaction as the data, and hands it
// back (Start) when the pipeline starts again.
//
// The required interfaces are small (Driver, Source, Reader); what only
// some sources can do is an optional interface the engine and the check
// command find by type assertion:
//
//   - Lister: the partitions are known before reading (files), so the
//     engine claims them up front;
//   - ProgressChecker, Checker: stored progress a source refuses to resume
//     from, checked at start and by txsink check;
//   - Marker: a fingerprint of what a position points into, stored with it;
//   - Republisher: the producer publishes copies as new records (Debezium
//     Server into NATS, without message ids), so the engine has the
//     decoder read each change's place in its source's log
//     (format.OrderReader) and drops the copies by it;
//   - Rebalancer: partitions are assigned and revoked while reading (a
//     Kafka consumer group);
//   - Committer: positions are committed back to the source after each
//     target commit (Kafka offsets, for lag tools);
//   - Boundaries: transaction boundaries come in a partition of their own
//     (Debezium's transaction topic);
//   - Sampler: records can be sampled without side effects (txsink check);
//   - Counter: positions count something other than bytes.
//
// On Readers: BatchReader (records come in batches, with the partitions'
// ends), Borrower (records borrowed from the reader's buffer), Waiter (the
// next read may wait), Sizer (the partition's end, for lag), SlotLagger
// (what the source keeps for the reader: a replication slot's WAL) and
// Lane (the partition it reads and where it starts).
//
// Sources register themselves (Register) from their package's init; the
// command imports package source/sources, which imports them all. Each
// declares its keys of the config's source section on its Driver (Keyed,
// and Validator for keys that depend on each other): package config
// parses, checks and documents them from the registry. To add a source:
// one package implementing Driver (with Keyed) and Source, with its own
// config struct decoded from Settings, and one import line in
// source/sources; nothing in package config.
package source

import (
	"context"
	"log/slog"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/errkind"
)

// Record is one raw record of a partition.
type Record struct {
	// Data is the record's bytes as the partition holds them (one JSON
	// document for the JSON formats), without framing such as a line
	// terminator. Each implementation documents how long Data stays valid.
	Data []byte
	// Key is the record's key, as the partition holds it (a Kafka
	// message's key), nil when it has none; valid as long as Data. The
	// formats that read it (format.KeyTyper) take a table's primary key
	// from its schema.
	Key []byte
	// Pos is the record's position: its partition, the offset to resume
	// from once the record is applied, and its ordinal for messages.
	Pos changelog.Position
}

// Reader reads records in order: the records of one partition, or (a
// BatchReader of a Rebalancer) of every partition the source owns, in
// order within each.
//
// Failure policy: io.EOF means a finite partition is exhausted; an error
// equal to ctx.Err() means Next gave up waiting, and the Reader may be used
// again with a live context; any other error is permanent, and Next keeps
// returning it.
type Reader interface {
	// Next returns the next record.
	Next(ctx context.Context) (Record, error)
	// Close releases the Reader's resources. Next must not run concurrently
	// with Close: cancel its context first.
	Close() error
}

// Driver opens the sources of one type (the config's source.type).
type Driver interface {
	// Open returns the source settings describe, checked, without reading
	// anything or connecting anywhere: that is Source.Open's.
	Open(settings Settings, env Env) (Source, error)
}

// Settings are the keys of the config's source section by their YAML
// names ("paths", "brokers", "sasl.mechanism"), with their typed values
// ([]string, bool, int64, time.Duration...). Each source decodes the keys
// it owns into its own config struct with Decode; package config, which
// parses the YAML, knows no source.
type Settings map[string]any

// Env is what a source gets from the pipeline besides its settings.
type Env struct {
	// Pipeline is the pipeline's name, for messages.
	Pipeline string
	// BaseDir is the config file's folder: relative names are relative
	// to it.
	BaseDir string
	// Log receives the source's log lines; never nil.
	Log *slog.Logger
	// ResetHint, when set, returns the command that forgets a partition's
	// progress, for messages that suggest it.
	ResetHint func(partition string) string
	// StartupTimeout is how long Source.Open waits for the source's
	// servers to answer (startup-timeout; see Await); 0 tries once.
	StartupTimeout time.Duration
}

// Stored is a partition's progress as the target holds it.
type Stored struct {
	// Position is where the partition resumes (zero: at its start).
	Position changelog.Position
	// Mark is the fingerprint stored with it (see Marker), "" for none.
	Mark string
}

// Start is what Source.Open resumes from.
type Start struct {
	// Stored returns a partition's stored progress (ok false: none).
	Stored func(partition string) (Stored, bool)
	// Rewind forgets a partition's stored progress, for a partition that
	// cannot resume (a stream is read from its start on every run).
	Rewind func(ctx context.Context, partition string) error
}

// Source is one configured source.
type Source interface {
	// Open starts reading at the stored progress and returns the Readers:
	// one per partition, or, for a Rebalancer, one of every partition it
	// is assigned. Open may be called again once Close returned (the
	// pipeline starts again after a change of the target's tables).
	Open(ctx context.Context, at Start) ([]Reader, error)
	// Close releases what Open acquired, once every Reader's Next has
	// returned.
	Close() error
}

// Lister is a Source whose partitions are known before it reads: the
// engine claims them in the target when it starts.
type Lister interface {
	// Partitions lists the partitions' names, in the config's order.
	Partitions() []string
}

// ProgressChecker is a Source that refuses stored progress it cannot
// resume from, before anything is read (a partition the configuration no
// longer reads).
type ProgressChecker interface {
	// CheckProgress returns an error saying what is wrong and what to do.
	CheckProgress(stored map[string]changelog.Position) error
}

// Checker is a Source that can tell, without reading or changing anything,
// every refusal Open would start with (txsink check).
type Checker interface {
	// Check returns nil, ctx's error, or the refusals joined
	// (errors.Join), each a *PartitionError.
	Check(ctx context.Context, stored map[string]Stored) error
}

// PartitionError is a refusal of a source to resume, of one partition or
// ("" Partition) of the partitions together.
type PartitionError struct {
	Partition string
	Err       error
}

// Error returns Err's message, which names the partition.
func (e *PartitionError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *PartitionError) Unwrap() error { return e.Err }

// Kind reports errkind.Permanent: the source cannot resume the partition
// from the stored progress until someone looks (see the message).
func (e *PartitionError) Kind() errkind.Kind { return errkind.Permanent }

// Where names the partition ("" for the partitions together).
func (e *PartitionError) Where() errkind.Where {
	return errkind.Where{Pos: changelog.Position{Partition: e.Partition}}
}

// Truncater is a Source whose changelog may carry TRUNCATEs
// (changelog.Truncate changes), as configured: the engine refuses at
// start a target that cannot apply them.
type Truncater interface {
	// Truncates returns the setting that makes the source emit
	// TRUNCATEs, as a message names it ("source.truncate: delete-all"),
	// or "" when it emits none.
	Truncates() string
}

// Marker is a Source whose positions have fingerprints, stored with the
// progress and handed back in Stored.Mark, so that a position into
// different bytes (a replaced file) is refused.
type Marker interface {
	// Mark returns the fingerprint of pos ("" for none). It is called
	// from the goroutine that commits, in the order of the positions.
	Mark(pos changelog.Position) (string, error)
}

// Republisher is a Source whose producer may publish again, after its
// own restart, records it published already, as new records at new
// positions that nothing in the source tells from news: Debezium Server
// into a NATS stream, without message ids. For such a source the engine
// has the decoder read each change's place in its source database's log
// (format.OrderReader, changelog.Change.Order) and drops the copies by
// it, also across its own restarts. Reading places costs every record,
// so the sources whose copies do not come so (files, written once; Kafka,
// whose Debezium connectors run in Kafka Connect) do not implement it.
type Republisher interface {
	// Republishes reports whether the source's records may be copies
	// published again; false is as if the source did not implement
	// Republisher.
	Republishes() bool
}

// Group is told of the partitions a Rebalancer is assigned and loses.
// Each call blocks the rebalance until it returns, and comes in order with
// the records: every record read before it was returned by a Reader.
type Group interface {
	// Assigned is told of newly assigned partitions and returns, for each
	// one with stored progress, the offset to resume from. An error
	// leaves the partitions unread and is reported by the Reader.
	Assigned(ctx context.Context, partitions []string) (map[string]int64, error)
	// Revoked is told of partitions taken away in an orderly rebalance:
	// what was read of them is committed before it returns.
	Revoked(ctx context.Context, partitions []string)
	// Lost is told of partitions lost without warning.
	Lost(ctx context.Context, partitions []string)
}

// Rebalancer is a Source whose partitions are assigned while it reads.
// Records of a partition it no longer owns are dropped by the engine.
type Rebalancer interface {
	// Rebalance sets the Group told of assignment changes; the engine
	// calls it before Open.
	Rebalance(g Group)
}

// Committer is a Source told of what the target committed, to record it
// where the source's own tools look (Kafka's committed offsets, for lag).
// The source never resumes from it: the target is the truth.
type Committer interface {
	// Committed is told of the positions of a commit. It must not wait;
	// failures are the source's to log.
	Committed(ctx context.Context, progress []changelog.Position)
	// Stopping is told, before Close, of the last committed position of
	// every partition read; it waits for the source's answer, within ctx.
	Stopping(ctx context.Context, progress []changelog.Position)
}

// Boundaries is a Source whose transactions' boundaries (END events) come
// in a partition of their own, which joins the data partitions'
// transactions (sink.transactions with a transaction topic).
type Boundaries interface {
	// BoundaryPartition names the partition of the boundaries; "" when
	// this source is configured without one (the boundaries then come
	// with the data).
	BoundaryPartition() string
	// CheckAssigned refuses assigned partitions the boundaries cannot be
	// in (a transaction topic of several partitions).
	CheckAssigned(partitions []string) error
}

// Counter is a Source whose positions count something other than bytes.
type Counter interface {
	// Unit is what offsets count ("records"), for status.
	Unit() string
}

// Batch is what a BatchReader returns.
type Batch struct {
	// Records are in order within each partition.
	Records []Record
	// Ends holds each polled partition's end (the offset the next record
	// will get), for lag.
	Ends map[string]int64
}

// BatchReader is a Reader that reads in batches, serialized with its
// Group's calls: between NextBatch and Release no assignment changes.
// Batch records own their bytes.
type BatchReader interface {
	// NextBatch waits for records and returns them; call Release once
	// they are handed on.
	NextBatch(ctx context.Context) (*Batch, error)
	// Release lets a rebalance that waited for the last batch go ahead.
	Release()
}

// Borrower is a Reader that can lend a record's bytes from its buffer.
type Borrower interface {
	// NextBorrowed is Next, except that Data is valid only until the next
	// call to Next or NextBorrowed.
	NextBorrowed(ctx context.Context) (Record, error)
}

// Waiter is a Reader that knows whether its next Next may wait for input
// not there yet (a followed file at its end, a pipe): callers holding
// records back hand them on first.
type Waiter interface {
	MayWait() bool
}

// Sizer is a Reader that knows where its partition ends now, for lag.
type Sizer interface {
	// Size returns the partition's end offset as last seen, or -1.
	// Safe for concurrent use with Next.
	Size() int64
}

// SlotLagger is a Reader whose source keeps data for it until the target
// confirms it (a PostgreSQL replication slot keeps WAL), for status and
// metrics.
type SlotLagger interface {
	// SlotLag returns the bytes the source keeps beyond what the target
	// confirmed (the server's WAL end minus the slot's position), or -1
	// when not known yet. Safe for concurrent use with Next.
	SlotLag() int64
}

// Lane is a Reader of one partition.
type Lane interface {
	// Partition is the partition's name.
	Partition() string
	// Start is where reading began.
	Start() changelog.Position
}

// Sampler is a Source whose records can be read for txsink check without
// side effects: nothing is consumed, no group is joined, nothing is
// committed, and streams are left alone.
type Sampler interface {
	// Sample reads up to req.N records of each partition from where a
	// run would read next, and hands each to fn, in order within its
	// partition. What it finds wrong with the source (a missing file, a
	// topic the brokers lack) is in the report's Notes, not an error: an
	// error is fn's, or ctx's.
	Sample(ctx context.Context, req SampleRequest, fn func(Record) error) (*SampleReport, error)
	// SampleUnit names what SampleReport.Count counts, singular ("file",
	// "Kafka partition"), for check's summary line.
	SampleUnit() string
}

// SampleRequest says what Sample reads.
type SampleRequest struct {
	// N is the most records sampled of each partition.
	N int
	// From holds where each partition with progress resumes (its stored
	// offset).
	From map[string]int64
	// Skip holds partitions not to sample (refused already).
	Skip map[string]bool
}

// SampleReport is what Sample found.
type SampleReport struct {
	// Files counts the files sampled, Partitions the partitions found.
	Files, Partitions int
	// Count is how many of the source's SampleUnit the sample covered.
	Count int
	// Notes are findings about the source, in the order found.
	Notes []Note
}

// Note is one finding about a source.
type Note struct {
	Severity Severity
	// Subject is what the note is about: a partition, a topic, brokers.
	Subject string
	// Message says what is wrong and what txsink run does about it, Fix
	// what to do.
	Message, Fix string
}

// Severity grades a Note.
type Severity int

// Severities, in increasing order: Error is what txsink run refuses.
const (
	Info Severity = iota
	Warning
	Error
)
