package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/txn"
)

// txnLoop is Run's loop in transaction mode
// (sink.transaction.multi-table.enabled): changes go through the
// transaction machine, each source transaction is reduced per key as it
// ends, and each plan of whole source transactions, the merge of their
// reductions, is committed as one target transaction.
type txnLoop struct {
	e *Engine
	m *txn.Machine[*reduced]
	// open counts, per partition, the row events of the transaction being
	// read, to check them against its END's event count.
	open map[string]*openTxn
	// lastOpen is open's entry for lastOpenPart, the partition checked
	// last.
	lastOpen     *openTxn
	lastOpenPart string
	// overrun is set while the buffer is full of open transactions, so the
	// warning is logged once per episode.
	overrun bool
	// inflight is the plan handed to the committer and not yet advanced;
	// committed is set (by the committer's goroutine) once it is
	// committed, and wakeCh then wakes Run.
	inflight  *txn.Plan[*reduced]
	committed atomic.Bool
	wakeCh    chan struct{}
	// merged is the buffer a plan's chunks are merged into, for its
	// unit; spare holds the reductions merged from, emptied, with their
	// capacity, for the chunks to come. A chunk's buffer is never the
	// merge's: it would keep a whole plan's capacity for one chunk's
	// rows, and every spare one in time.
	merged *reduce.Buffer
	spare  []*reduced
	// txnScratch holds the changes of the transaction being reduced.
	txnScratch []*changelog.Change
	// held holds, in read order, the arenas records were decoded into
	// (see changelog.Arena) while the machine may still hold changes in
	// them (see release); unheld collects, for the next arena, the
	// partitions and offsets of the changes stepped since the last one.
	// ended is, per partition, the offset of the last transaction end
	// stepped: the machine holds no change at or before it, since a
	// transaction's changes go when it ends (reduced into the partition's
	// finished transactions).
	held   []heldArena
	unheld []changelog.Position
	ended  map[string]int64
	// openList is the machine's open transactions, as note last
	// published them; published says there were some.
	openList  []txn.OpenTxn
	published bool
	// st is the autonomous flush into a target that streams (nil: the
	// target does not, and each plan's unit is loaded at its commit).
	st *streaming
	// maxTxn is sink.transaction.multi-table.max-txn-bytes resolved: the
	// most memory the decoded changes of one open source transaction may
	// take (see bound); 0 for no limit.
	maxTxn int64
}

// heldArena is the arena of one decoded job and, per partition of the
// job, the offset of its last change stepped into the machine. A job has
// one partition (decodePool.held gives arenas only to streams of one);
// the rule holds for several.
type heldArena struct {
	mem  *changelog.Arena
	ends []changelog.Position
}

// reduced is what the loop keeps of a run of one partition's finished
// source transactions (txn.Machine.Finished): their reduction per key,
// made as each transaction ended, so that a plan's unit is the merge of
// its chunks' reductions, ready at once (the target does not wait for a
// plan to be reduced after the one before it commits, as it does not in
// plain mode), and the decoded changes can go as soon as their
// transaction is reduced.
type reduced struct {
	buf     *reduce.Buffer
	skipped int // changes of skipped tables
	// err is the first error reducing them met (bad input, or a table
	// that cannot be looked up): the plan that holds them fails with it
	// when it is cut, after the plans before it commit, as it would have
	// had it been reduced then. Nothing after it is reduced.
	err error
	// part is the reduction taken from buf once the chunk froze, to be
	// handed to a target that streams (see streaming), and progress the
	// positions it reaches; nil while buf holds it.
	part     *commit.Unit
	progress []changelog.Position
}

func (e *Engine) newTxnLoop() (*txnLoop, error) {
	s := e.cfg.Sink
	// No MaxTxnBytes: the loop bounds a transaction by the memory of its
	// decoded changes (bound), not by the records' Size the machine counts.
	m, err := txn.New[*reduced](txn.Config{
		CommitInterval:     s.FlushInterval,
		MiniSwitchInterval: s.MiniSwitchInterval(),
		MinSwitchBytes:     s.TxnMinSwitchBytes,
		BufferSize:         s.TxnBufferSize,
		CommitRows:         s.FlushMaxRows,
		CommitBytes:        s.FlushMaxBytes,
	})
	if err != nil {
		return nil, fmt.Errorf("sink: %w", err)
	}
	return &txnLoop{e: e, m: m, open: map[string]*openTxn{}, wakeCh: make(chan struct{}, 1),
		ended: map[string]int64{}, maxTxn: s.MaxTxnBytes(), st: e.newStreaming()}, nil
}

// record steps every change of a record into the machine. A change that
// names no source transaction is a transaction of its own, except that
// the changes of one record always stay together: a record's position is
// the only progress there is for each of them.
//
// A record with no change (a tombstone, a BEGIN event) is not stepped: the
// machine has no position-only input, and progress reaches past it with
// the next committed change. Reading it again after a restart is harmless.
func (l *txnLoop) record(ctx context.Context, d *decoded) error {
	changes := d.changes
	if len(changes) > 0 && l.e.applied(d.pos) {
		// Every change of a record carries the record's position.
		changes = nil
	}
	if len(changes) > 0 {
		l.unheld = notePos(l.unheld, d.pos)
	}
	if d.mem != nil {
		// The job's last record: its arena lives until the machine is
		// done with every change in it, this record's included.
		l.hold(d.mem)
	}
	if l.maxTxn > 0 && d.inArena {
		if ot := l.openOf(d.pos.Partition); !ot.inJob {
			ot.jobFrom, ot.inJob = d.pos.Offset, true
		}
	}
	for i := range changes {
		c := &changes[i]
		if l.replayed(c) {
			continue
		}
		if err := l.check(ctx, c, i == len(changes)-1); err != nil {
			return err
		}
		if l.maxTxn > 0 && !d.inArena {
			if err := l.bound(c, int64(c.MemBytes())); err != nil {
				return err
			}
		}
		// Step may ask for a commit before the next change is taken.
		for l.m.Pressure() == txn.PressureHard {
			if err := l.commitReady(ctx, false); err != nil {
				return err
			}
		}
		rows := 0
		now := l.e.now()
		if c.TxnEnd {
			// The transaction is reduced as it ends, which counts its
			// rows after reduction, exactly; its other changes count
			// none.
			rows = l.reduceEnding(ctx, c, now)
		}
		// The machine keeps c itself until its transaction ends: nothing
		// changes a decoded change after it is stepped.
		if err := l.m.StepCounted(c, rows, now); err != nil && !errors.Is(err, txn.ErrBackPressure) {
			return err
		}
		if c.TxnEnd {
			l.ended[c.Pos.Partition] = c.Pos.Offset
			l.lastOpen.mem = 0 // c's partition's, set by check
		}
	}
	if d.mem != nil && l.maxTxn > 0 {
		// The job's last record: its arena's memory is known now. A
		// transaction that was open when the job began holds the whole
		// arena until it ends.
		ot := l.openOf(d.pos.Partition)
		ot.inJob = false
		if open := l.m.Open(d.pos.Partition); len(open) > 0 && open[0].Pos.Offset < ot.jobFrom {
			if err := l.bound(open[len(open)-1], int64(d.mem.Bytes())); err != nil {
				return err
			}
		}
	}
	if l.m.Pressure() == txn.PressureOverrun {
		if !l.overrun {
			l.e.log.Warn("the transaction buffer is full of open source transactions; reading on until one ends (set transaction.multi-table.max-txn-bytes to bound them)",
				"bytes", l.m.Bytes(), "open", l.m.OpenTxns())
		}
		l.overrun = true
	} else {
		l.overrun = false
	}
	return l.commitReady(ctx, false)
}

// check validates c before it is stepped: its table must be known (or
// skipped, or refused under the dead-letter policy, which quarantines the
// transaction as it ends), and an END's event count must match the events
// that came.
func (l *txnLoop) check(ctx context.Context, c *changelog.Change, lastOfRecord bool) error {
	part := c.Pos.Partition
	ot := l.openOf(part)
	if c.Kind == changelog.EndTxn {
		if c.TxnEvents > 0 && (ot.id != c.TxnID || ot.events != int(c.TxnEvents)) {
			got := ot.events
			if ot.id != c.TxnID {
				got = 0
			}
			return &reduce.Error{Pos: c.Pos, Table: "(transaction " + c.TxnID + ")",
				Reason: fmt.Sprintf("the transaction's END event counts %d events, but %d arrived in partition %s before it", c.TxnEvents, got, part),
				Hint:   "events of the transaction are missing or were sent to another partition; a whole transaction must be read from one partition (check the source's topic routing and retention)"}
		}
		ot.remember(c.TxnID)
		ot.id, ot.events, ot.order = "", 0, 0
		return nil
	}
	e := l.e
	e.countEvent(c.Kind)
	e.hookChange(c)
	if _, err := e.tableFor(ctx, c); err != nil && !(e.deadLettering() && errkind.IsBadInput(err)) {
		return err
	}
	if c.TxnID == "" {
		// A -U is one with the change that follows it, its +U: the two
		// are reduced together (the +U may move the key) and committed
		// at once.
		c.TxnEnd = c.TxnEnd || (lastOfRecord && c.Kind != changelog.UpdateBefore)
		return nil
	}
	if ot.id != c.TxnID {
		ot.id, ot.events = c.TxnID, 0
	}
	ot.events++
	return nil
}

// bound adds mem, memory c's transaction holds, to it and checks it
// against max-txn-bytes: the decoded changes of one open source
// transaction may not take more. A transaction is held whole until its end
// and nothing can be committed or dropped to make room for it, so the
// limit is what keeps a transaction larger than memory from ending the
// process.
//
// A change on the heap counts its MemBytes as it is checked. Changes
// decoded into an arena count, once the job's last record comes, the
// arena's Bytes, slabs and their unused room included, when the whole job
// is the transaction's: it then holds the arena until it ends (on a
// transaction of short txsink-json inserts, that was twice the changes'
// MemBytes). The first and the last job of a transaction, shared with the
// transactions around it, count nothing: they go as soon as those end,
// and a small transaction is not charged the room of a job's arena (about
// 120 KiB for 128 narrow records), which would refuse it under a small
// buffer-size. A transaction's memory passes the limit by at most those
// two jobs.
func (l *txnLoop) bound(c *changelog.Change, mem int64) error {
	part := c.Pos.Partition
	ot := l.openOf(part)
	ot.mem += mem
	if ot.mem <= l.maxTxn {
		return nil
	}
	te := &txn.Error{Partition: part, TxnID: cmp.Or(ot.id, c.TxnID), Pos: c.Pos, Bytes: ot.mem, Limit: l.maxTxn, Decoded: true, Err: txn.ErrMaxTxnBytes}
	if open := l.m.Open(part); len(open) > 0 {
		te.Start = open[0].Pos
	}
	return te
}

// openOf returns what the loop knows of part's open transaction.
func (l *txnLoop) openOf(part string) *openTxn {
	ot := l.lastOpen
	if ot == nil || l.lastOpenPart != part {
		// A partition's changes come in runs: most find their partition
		// without hashing its name.
		if ot = l.open[part]; ot == nil {
			ot = &openTxn{}
			l.open[part] = ot
		}
		l.lastOpen, l.lastOpenPart = ot, part
	}
	return ot
}

// note publishes the buffer's bytes and the open transactions; with none
// open now or at the last call, without taking the engine's lock twice.
func (l *txnLoop) note() {
	l.openList = l.m.AppendOpen(l.openList[:0])
	l.e.noteBuffer(l.m.Bytes(), len(l.openList))
	if len(l.openList) > 0 || l.published {
		l.e.noteOpen(l.openList)
		l.published = len(l.openList) > 0
	}
}

func (l *txnLoop) tick(ctx context.Context) error {
	// The machine's time-based work is due even while a plan commits,
	// when commitReady returns before Ready (which ticks it): a partition
	// quiet for the mini-switch interval switches its chunk now. Run's
	// timer fires at the deadline NextDeadline reports for that switch,
	// and a deadline left passed would fire it again at once, a busy loop
	// for as long as the commit takes.
	l.m.Tick(l.e.now())
	err := l.commitReady(ctx, false)
	// The source may be quiet: let go of the arenas of transactions that
	// ended since the last job came.
	l.release()
	l.note()
	return err
}

func (l *txnLoop) finish(ctx context.Context) error {
	err := l.commitReady(ctx, true)
	l.note()
	return err
}

func (l *txnLoop) deadline() (time.Time, bool) { return l.recycleDeadline(l.m.NextDeadline()) }

// commitReady commits every plan the machine has ready, each as one
// target transaction. flush asks for every finished transaction now (end
// of input, shutdown); open transactions are left out and read again after
// a restart.
//
// While Run drives the loop, plans are committed on the committer's
// goroutine: the loop merges a plan's reductions into a unit, hands it
// over and goes back to reading, and Advances the plan once the committer says it is
// committed (wake). One plan is in flight at a time, as the machine
// requires. Without a committer (the loop used on its own) commits are
// synchronous.
//
// Into a target that streams, the frozen chunks the next plan will take
// are then handed to it, one at a time (streamNext).
func (l *txnLoop) commitReady(ctx context.Context, flush bool) error {
	if err := l.commitPlans(ctx, flush); err != nil {
		return err
	}
	return l.streamNext()
}

// commitPlans is commitReady without the autonomous flush.
func (l *txnLoop) commitPlans(ctx context.Context, flush bool) error {
	for {
		if l.inflight != nil {
			if !l.committed.Load() {
				due := l.m.SizeDue
				if l.e.cfg.Sink.FlushCoalesce {
					// The next plan keeps taking transactions until
					// this one is committed, up to max-bytes.
					due = l.m.BytesDue
				}
				if !flush && l.m.Pressure() != txn.PressureHard && !due() {
					return nil // it commits while the loop reads on
				}
				// The next plan's transactions are reduced already
				// (reduceEnding). Wait returns once the committer has
				// run signal, or with the unit's error.
				if err := l.e.async.Wait(); err != nil {
					return err
				}
			}
			l.committed.Store(false)
			l.advance(l.inflight)
			l.inflight = nil
		}
		if l.e.async != nil {
			if err := l.e.async.failed(); err != nil {
				return err
			}
		}
		now := l.e.now()
		recycle := !flush && l.recycleDue(now)
		plan := l.m.Ready(now, flush || recycle)
		if plan == nil {
			return nil
		}
		reason := plan.Reason.String()
		if recycle {
			reason = "recycle"
		}
		u, txns, err := l.unit(plan)
		if err != nil {
			return err
		}
		switch {
		case u == nil:
			l.advance(plan)
		case l.e.async == nil:
			if err := l.e.commitUnit(ctx, u, reason, txns); err != nil {
				return err
			}
			l.advance(plan)
		default:
			l.inflight = plan
			if err := l.e.async.submit(pendingUnit{u: u, reason: reason, txns: txns, done: l.signal}); err != nil {
				return err
			}
		}
	}
}

// advance tells the machine the plan in flight is done with, which frees
// its bytes. The unit holds copies (reduce detaches what it buffers), and
// the decoded changes went when their transactions ended (see release).
func (l *txnLoop) advance(plan *txn.Plan[*reduced]) { l.m.Advance(plan) }

// hold keeps mem, the arena of the changes noted in unheld, until the
// machine holds none of them, and first recycles the arenas it is done
// with.
func (l *txnLoop) hold(mem *changelog.Arena) {
	l.release()
	l.held = append(l.held, heldArena{mem: mem, ends: l.unheld})
	l.unheld = nil
}

// release recycles the held arenas none of whose changes the machine
// holds any more: within a partition transactions end in order, so every
// change at or before the partition's last end stepped is gone from the
// machine, and an arena whose changes all lie there, in every partition
// it holds changes of, is no one's.
func (l *txnLoop) release() {
	kept := l.held[:0]
	for _, h := range l.held {
		done := true
		for _, end := range h.ends {
			if at, ok := l.ended[end.Partition]; !ok || at < end.Offset {
				done = false
				break
			}
		}
		if done {
			putArena(h.mem)
		} else {
			kept = append(kept, h)
		}
	}
	clear(l.held[len(kept):])
	l.held = kept
}

// notePos records in ends, one position per partition, that a change at
// pos is stepped.
func notePos(ends []changelog.Position, pos changelog.Position) []changelog.Position {
	for i := range ends {
		if ends[i].Partition == pos.Partition {
			ends[i].Offset = max(ends[i].Offset, pos.Offset)
			return ends
		}
	}
	return append(ends, changelog.Position{Partition: pos.Partition, Offset: pos.Offset})
}

// signal is called by the committer once the plan in flight is
// committed.
func (l *txnLoop) signal() {
	l.committed.Store(true)
	select {
	case l.wakeCh <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// wake fires when the plan in flight is committed, so that Run calls tick
// and the machine can cut the next plan without waiting for a record.
func (l *txnLoop) wake() <-chan struct{} { return l.wakeCh }

// heldBack commits nothing: the machine holds back no plan for a busy
// target, and a plan cut before the error is committed by the committer.
func (l *txnLoop) heldBack(context.Context) error { return nil }

// assigned takes any partitions: each one's transactions are its own.
func (l *txnLoop) assigned([]string) error { return nil }

// revoked drops the changes of the partitions' unfinished transactions
// (finish committed the finished ones), and forgets the partitions.
func (l *txnLoop) revoked(parts []string, _ map[string]bool) (int, string, error) {
	dropped := 0
	for _, p := range parts {
		dropped += l.m.Drop(p)
		l.forget(p)
	}
	l.e.noteBuffer(l.m.Bytes(), l.m.OpenTxns())
	return dropped, "changes", nil
}

// reduceEnding reduces the transaction c ends, the open transaction of its
// partition with c, into the partition's finished transactions
// (txn.Machine.Finished), before c is stepped, and returns the rows it
// adds there, for the machine's CommitRows. The count is exact within the
// chunk: keys its earlier transactions wrote add none.
func (l *txnLoop) reduceEnding(ctx context.Context, c *changelog.Change, now time.Time) int {
	part := c.Pos.Partition
	fin := l.m.Finished(part)
	r := *fin
	if r == nil {
		if n := len(l.spare); n > 0 {
			r = l.spare[n-1]
			l.spare = l.spare[:n-1]
		} else {
			r = &reduced{buf: reduce.NewBuffer(l.e.cfg.Name)}
			// A key met in another partition stops the pipeline when
			// this transaction is reduced, at the latest: its keys meet
			// the memory now, the other partitions' chunks (committed,
			// finished or merged) met it as they were reduced.
			r.buf.ConfinePartitions(l.e.keys)
		}
		*fin = r
	}
	txnChanges := append(append(l.txnScratch[:0], l.m.Open(part)...), c)
	defer func() {
		clear(txnChanges)
		l.txnScratch = txnChanges[:0]
	}()
	before := r.buf.Rows()
	if r.err == nil {
		r.err = l.reduceTxn(ctx, r, txnChanges, now)
	}
	if r.err != nil {
		// No count after reduction: count each row-writing change.
		rows := 0
		for _, ch := range txnChanges {
			if ch.Kind.Writes() {
				rows++
			}
		}
		return rows
	}
	return r.buf.Rows() - before
}

// forget forgets a partition given up whose buffered changes, and their
// reductions, the machine dropped (txn.Machine.Drop).
func (l *txnLoop) forget(part string) {
	// Its open transaction is read again from the stored progress, by
	// the new owner or by this loop: counted on, its events would count
	// twice against its END's event count.
	delete(l.open, part)
	l.lastOpen = nil
	// The machine dropped the partition's changes: the arenas wait for
	// the other partitions only, and a new owner's offsets start afresh.
	delete(l.ended, part)
	for i := range l.held {
		l.held[i].ends = slices.DeleteFunc(l.held[i].ends, func(p changelog.Position) bool { return p.Partition == part })
	}
	l.unheld = slices.DeleteFunc(l.unheld, func(p changelog.Position) bool { return p.Partition == part })
	l.release()
}

// reduceTxn reduces the changes of one source transaction into r. Under
// the dead-letter policy a transaction with a change that cannot be
// applied is quarantined whole, in the same unit, and the others go on;
// the error is then one that is not about the input.
func (l *txnLoop) reduceTxn(ctx context.Context, r *reduced, changes []*changelog.Change, now time.Time) error {
	if l.e.deadLettering() {
		bad, err := l.firstBad(ctx, r.buf, changes)
		if err != nil {
			return err
		}
		if bad != nil {
			l.quarantine(r.buf, changes, bad, now)
			return nil
		}
	}
	return l.add(ctx, r, changes, now)
}

// add adds changes to r, and counts those of skipped tables.
func (l *txnLoop) add(ctx context.Context, r *reduced, changes []*changelog.Change, now time.Time) error {
	for _, c := range changes {
		if c.Kind == changelog.EndTxn {
			r.buf.Skip(c.Pos, now)
			continue
		}
		t, err := l.e.tableFor(ctx, c)
		if err != nil {
			return err
		}
		if t == nil {
			r.skipped++
			r.buf.SkipChange(c, now)
			continue
		}
		if c.Kind == changelog.Truncate {
			if err := l.e.truncatable(c, t); err != nil {
				return err
			}
		}
		if err := l.e.stale(ctx, t, c, r.buf.Add(t, c, now)); err != nil {
			return err
		}
	}
	return nil
}
