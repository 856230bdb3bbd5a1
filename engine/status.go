package engine

// Stats and status: what a pipeline did (Stats, counted under the
// engine's mu) and what it is doing (Status, for /status, the gauges and
// the progress bar). The loop, the committer and the readers note what
// they do here; Stats and Status may be read from any goroutine.

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/source"
	"github.com/txsink/txsink/txn"
)

// Stats counts what a pipeline did. Read it with Engine.Stats.
type Stats struct {
	Events      map[changelog.Kind]int64 // changes read, by kind
	Skipped     int64                    // changes of unknown tables skipped
	Upserted    int64                    // rows upserted after reduction
	Deleted     int64                    // keys deleted after reduction
	Inserted    int64                    // rows appended to append-only tables
	Commits     int64                    // target transactions committed
	Txns        int64                    // source transactions committed (transaction mode)
	Retries     int64                    // transient errors retried
	DeadLetters int64                    // records or source transactions quarantined (bad-input: dead-letter)
	Started     time.Time
	Bytes       int64 // bytes of source records read
	// Tables counts the rows committed per target table.
	Tables map[string]TableStats
	// Unfinished lists, once Run has returned nil in transaction mode,
	// the source transactions it left open: read in part, their end not
	// yet, so nothing of them is committed and each one's partition's
	// stored progress stays before it. The next run reads them again from
	// there, and applies each once its end is read.
	Unfinished []OpenTxn
	// EndOfInput says Run returned nil because every source was read to
	// its end, not because its context was done (a signal).
	EndOfInput bool
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

// TableStats counts the rows committed to one target table, after
// reduction.
type TableStats struct {
	Upserted, Deleted, Inserted int64
}

// Stats returns a copy of the counters.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.stats
	s.Events = make(map[changelog.Kind]int64, len(e.stats.Events))
	for k, v := range e.stats.Events {
		s.Events[k] = v
	}
	s.Tables = maps.Clone(e.stats.Tables)
	s.Unfinished = slices.Clone(e.stats.Unfinished)
	return s
}

// countEvent counts one change read; foldEvents publishes the counts.
func (e *Engine) countEvent(k changelog.Kind) {
	if int(k) < len(e.events) {
		e.events[k]++
	}
}

// foldEvents moves the changes counted since the last call into stats,
// under one lock.
func (e *Engine) foldEvents() {
	e.mu.Lock()
	for k, n := range e.events {
		if n != 0 {
			e.stats.Events[changelog.Kind(k)] += n
			e.events[k] = 0
		}
	}
	e.mu.Unlock()
}

// partLocked returns the status of a partition, creating it. e.mu must be
// held (or the engine not yet shared).
func (e *Engine) partLocked(name string) *PartitionStatus {
	ps := e.parts[name]
	if ps == nil {
		ps = &PartitionStatus{Name: name, Unit: "bytes", End: -1}
		if c, ok := e.src.(source.Counter); ok {
			ps.Unit = c.Unit()
		}
		e.parts[name] = ps
	}
	return ps
}

// setState moves the pipeline to state st (err for StateFailed).
func (e *Engine) setState(st State, err error) {
	e.mu.Lock()
	e.state, e.stopErr = st, err
	e.mu.Unlock()
}

// noteRead records how far partition part has been read, and its size
// when known (-1 otherwise).
func (e *Engine) noteRead(part string, offset, size int64) {
	e.mu.Lock()
	e.partLocked(part).noteRead(offset, size)
	e.mu.Unlock()
}

// noteRead records that the partition has been read up to offset, and
// its size when known (-1 otherwise). The caller holds the engine's mu.
func (ps *PartitionStatus) noteRead(offset, size int64) {
	ps.Read = max(ps.Read, offset)
	if size >= 0 {
		ps.End = size
	}
}

// noteBuffer records what the buffer holds, for Status.
func (e *Engine) noteBuffer(bytes int64, open int) {
	e.mu.Lock()
	e.buffered, e.openTxns = bytes, open
	e.mu.Unlock()
}

// noteOpen records the open source transactions, for Status.
func (e *Engine) noteOpen(open []txn.OpenTxn) {
	e.mu.Lock()
	e.open = e.open[:0]
	for _, o := range open {
		e.open = append(e.open, OpenTxn{Partition: o.Partition, TxnID: o.ID, StartOffset: o.Start.Offset, StartSeq: o.Start.Seq, Changes: o.Changes})
	}
	e.mu.Unlock()
}

// noteUnfinished records, and logs, the source transactions left open
// when Run ends without an error; end says the input ended (else a
// signal stopped it). At the end of input they are worth a warning: the
// run exits as if done, and nothing else would say that the last
// transactions of its input are not in the target.
func (e *Engine) noteUnfinished(end bool) {
	e.mu.Lock()
	open := slices.Clone(e.open)
	e.stats.Unfinished, e.stats.EndOfInput = open, end
	e.mu.Unlock()
	for _, o := range open {
		if end {
			e.log.Warn("the input ended inside a source transaction: nothing of it is committed, and the next run applies it once its end is read (the stored progress stays before it)",
				"partition", o.Partition, "txn", o.TxnID, "start", o.Start().String(), "changes", o.Changes)
		} else {
			e.log.Info("stopped inside a source transaction: the next run reads it again from the stored progress",
				"partition", o.Partition, "txn", o.TxnID, "start", o.Start().String(), "changes", o.Changes)
		}
	}
}

// Status returns a snapshot of the pipeline. Safe from any goroutine.
func (e *Engine) Status() Status {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := Status{
		Pipeline:      e.cfg.Name,
		State:         e.state,
		BufferedBytes: e.buffered,
		OpenTxns:      e.openTxns,
		Open:          slices.Clone(e.open),
		LastCommit:    e.lastCommit,
		Stats: StatsSnapshot{
			Events:      make(map[string]int64, len(e.stats.Events)),
			Skipped:     e.stats.Skipped,
			Upserted:    e.stats.Upserted,
			Deleted:     e.stats.Deleted,
			Inserted:    e.stats.Inserted,
			Commits:     e.stats.Commits,
			Txns:        e.stats.Txns,
			Retries:     e.stats.Retries,
			Bytes:       e.stats.Bytes,
			DeadLetters: e.stats.DeadLetters,
		},
	}
	if e.stopErr != nil {
		st.Error = e.stopErr.Error()
	}
	for k, n := range e.stats.Events {
		st.Stats.Events[k.String()] = n
	}
	for _, ps := range e.parts {
		st.Partitions = append(st.Partitions, *ps)
	}
	sort.Slice(st.Partitions, func(i, j int) bool { return st.Partitions[i].Name < st.Partitions[j].Name })
	return st
}

// State is where a pipeline is in its life.
type State string

// The pipeline states Status reports.
const (
	StateStarting State = "starting" // opened, not reading yet
	StateRunning  State = "running"  // reading and committing
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
}

// PartitionStatus is one partition in a Status.
type PartitionStatus struct {
	Name string `json:"name"`
	// Unit is what the offsets count: "bytes" (a file) or "records" (a
	// Kafka partition, whose offsets number its records).
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
	// LastCommit is when the partition's progress last moved.
	LastCommit time.Time `json:"last_commit"`
}

// StatsSnapshot is Stats in a form that encodes to JSON.
type StatsSnapshot struct {
	Events   map[string]int64 `json:"events"`
	Skipped  int64            `json:"skipped"`
	Upserted int64            `json:"upserted"`
	Deleted  int64            `json:"deleted"`
	Inserted int64            `json:"inserted"`
	Commits  int64            `json:"commits"`
	Txns     int64            `json:"txns"`
	Retries  int64            `json:"retries"`
	// DeadLetters counts records or source transactions quarantined
	// (bad-input: dead-letter).
	DeadLetters int64 `json:"dead_letters"`
	Bytes       int64 `json:"bytes_read"`
}
