package engine

// Stats and status: what a pipeline did (Stats, counted under the
// engine's mu) and what it is doing (Status, for /status, the gauges and
// the progress bar). The loop, the committer and the readers note what
// they do here; Stats and Status may be read from any goroutine.

import (
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/source"
	"github.com/txsink/txsink/txn"
)

// Stats counts what a pipeline did. Read it with Engine.Stats.
type Stats struct {
	Events  map[changelog.Kind]int64 // changes read, by kind
	Skipped int64                    // changes of unknown tables skipped
	// SchemaChanges and Messages count the records that carry no row,
	// skipped: schema changes (DDL) and logical decoding messages.
	SchemaChanges, Messages int64
	Upserted                int64 // rows upserted after reduction
	Deleted                 int64 // keys deleted after reduction
	Inserted                int64 // rows appended to append-only and history tables
	Commits                 int64 // target transactions committed
	Txns                    int64 // source transactions committed (transaction mode)
	Retries                 int64 // transient errors retried
	DeadLetters             int64 // records or source transactions quarantined (bad-input: dead-letter)
	// GuardRefused counts the upserts and deletes a version guard
	// refused (tables[].version-column: the stored row was newer), and
	// DeletesIgnored the deletes of tables with delete: ignore.
	GuardRefused, DeletesIgnored int64
	// Copies counts the changes dropped as copies of changes read
	// already, published again by the source's producer (Debezium Server
	// after its restart): by their place in the source's log, also across
	// restarts of txsink, or by their transaction's metadata.
	Copies  int64
	Started time.Time
	Bytes   int64 // bytes of source records read
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

// countEvent counts one change read, a row change or a TRUNCATE (the
// records about the source are counted apart, see notes.go);
// foldEvents publishes the counts.
func (e *Engine) countEvent(k changelog.Kind) {
	if int(k) < len(e.events) && !k.Skipped() {
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
	e.stats.Copies += e.copies
	e.copies = 0
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
	noteReadOf(e.partLocked(part), offset, size)
	e.mu.Unlock()
}

// noteReadOf records that partition ps has been read up to offset, and
// its size when known (-1 otherwise). The caller holds the engine's mu.
func noteReadOf(ps *PartitionStatus, offset, size int64) {
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
			Events:         make(map[string]int64, len(e.stats.Events)),
			Skipped:        e.stats.Skipped,
			SchemaChanges:  e.stats.SchemaChanges,
			Messages:       e.stats.Messages,
			Upserted:       e.stats.Upserted,
			Deleted:        e.stats.Deleted,
			Inserted:       e.stats.Inserted,
			Commits:        e.stats.Commits,
			Txns:           e.stats.Txns,
			Retries:        e.stats.Retries,
			Bytes:          e.stats.Bytes,
			DeadLetters:    e.stats.DeadLetters,
			GuardRefused:   e.stats.GuardRefused,
			DeletesIgnored: e.stats.DeletesIgnored,
			Copies:         e.stats.Copies,
		},
	}
	if e.stopErr != nil {
		st.Error = e.stopErr.Error()
	}
	if e.retry != nil && (e.state == StateRunning || e.state == StateStopping) {
		// Once the pipeline has stopped, its error says what the retries
		// met.
		r := *e.retry
		st.Retrying = &r
		if e.state == StateRunning {
			st.State = StateDegraded
		}
	}
	for k, n := range e.stats.Events {
		st.Stats.Events[k.String()] = n
	}
	for _, ps := range e.parts {
		p := *ps
		if l := e.slotLags[p.Name]; l != nil {
			if v := l.SlotLag(); v >= 0 {
				p.SlotLagBytes = &v
			}
		}
		st.Partitions = append(st.Partitions, p)
	}
	sort.Slice(st.Partitions, func(i, j int) bool { return st.Partitions[i].Name < st.Partitions[j].Name })
	if r, ok := e.target.(sink.Reporter); ok {
		r.Report(&st)
	}
	return st
}
