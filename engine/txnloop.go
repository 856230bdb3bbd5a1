package engine

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"sync/atomic"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/format/native"
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/txn"
)

// txnLoop is Run's loop in transaction mode
// (sink.transaction.multi-table.enabled): changes go through the
// transaction machine, and each plan of whole source transactions is
// reduced per key and committed as one target transaction.
type txnLoop struct {
	e *Engine
	m *txn.Machine
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
	inflight  *txn.Plan
	committed atomic.Bool
	wakeCh    chan struct{}
	// seen holds the rows counted since the machine last cut a plan, so
	// that a key's later changes count no row (see rows), by their keys'
	// hashes with seed.
	seen map[rowID]struct{}
	seed maphash.Seed
	// ahead holds, per partition, its finished source transactions that
	// no plan holds yet, reduced as each ends (see reduceEnding): when the
	// machine cuts a plan its unit is a merge of these, ready at once, so
	// the target does not wait for a plan to be reduced after the one
	// before it commits, as it does not in plain mode.
	ahead map[string]*reducedAhead
	// reducedAtCut counts the partitions whose part of a plan was reduced
	// when the plan was cut, not ahead (see partUnit).
	reducedAtCut int
	// held holds, in read order, the arenas records were decoded into
	// (see changelog.Arena) while the machine may still hold changes in
	// them (see advance); unheld collects, for the next arena, the
	// partitions and offsets of the changes stepped since the last one.
	// advanced is, per partition, the offset of the last change a plan
	// took: the machine holds none at or before it.
	held     []heldArena
	unheld   []changelog.Position
	advanced map[string]int64
}

// heldArena is the arena of one decoded job and, per partition of the
// job, the offset of its last change stepped into the machine. A job has
// one partition (decodePool.held gives arenas only to streams of one);
// the rule holds for several.
type heldArena struct {
	mem  *changelog.Arena
	ends []changelog.Position
}

// reducedAhead is one partition's finished source transactions, reduced
// ahead of the plan that will hold them.
type reducedAhead struct {
	buf *reduce.Buffer
	// changes counts the partition's finished changes not in a plan,
	// reduced into buf unless broken; a plan that holds exactly these
	// takes buf.
	changes int
	skipped int // changes of skipped tables among changes
	// broken is set when a change could not be reduced: the plan that
	// holds it reduces its changes itself, and reports the error then.
	broken bool
}

// rowID is one row of one table, by its key's hash (reduce.Table.RowKey).
type rowID struct {
	t   *reduce.Table
	key uint64
}

type openTxn struct {
	id     string
	events int
}

func (e *Engine) newTxnLoop() (*txnLoop, error) {
	s := e.cfg.Sink
	m, err := txn.New(txn.Config{
		CommitInterval:     s.FlushInterval,
		MiniSwitchInterval: s.MiniSwitchInterval(),
		MinSwitchBytes:     s.TxnMinSwitchBytes,
		BufferSize:         s.TxnBufferSize,
		MaxTxnBytes:        s.TxnMaxTxnBytes,
		CommitRows:         s.FlushMaxRows,
		CommitBytes:        s.FlushMaxBytes,
	})
	if err != nil {
		return nil, fmt.Errorf("sink: %w", err)
	}
	return &txnLoop{e: e, m: m, open: map[string]*openTxn{}, wakeCh: make(chan struct{}, 1),
		seen: map[rowID]struct{}{}, seed: maphash.MakeSeed(), ahead: map[string]*reducedAhead{},
		advanced: map[string]int64{}}, nil
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
	for i := range changes {
		c := &changes[i]
		t, err := l.check(ctx, c, i == len(changes)-1)
		if err != nil {
			return err
		}
		// Step may ask for a commit before the next change is taken.
		for l.m.Pressure() == txn.PressureHard {
			if err := l.commitReady(ctx, false); err != nil {
				return err
			}
		}
		var rows int
		switch {
		case l.e.deadLettering():
			rows = l.rows(t, c)
		case c.TxnEnd:
			// The transaction is reduced as it ends, which counts its
			// rows after reduction, exactly; its other changes count
			// none.
			rows = l.reduceEnding(ctx, c)
		}
		// The machine keeps c itself: nothing changes a decoded change
		// after it is stepped.
		if err := l.m.StepCounted(c, rows, l.e.now()); err != nil && !errors.Is(err, txn.ErrBackPressure) {
			return err
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
// skipped), and an END's event count must match the events that came. It
// returns c's table: nil for an END, a skipped table, or a table refused
// under the dead-letter policy.
func (l *txnLoop) check(ctx context.Context, c *changelog.Change, lastOfRecord bool) (*reduce.Table, error) {
	part := c.Pos.Partition
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
	if c.Kind == changelog.EndTxn {
		if c.TxnEvents > 0 && (ot.id != c.TxnID || ot.events != c.TxnEvents) {
			got := ot.events
			if ot.id != c.TxnID {
				got = 0
			}
			return nil, &reduce.Error{Pos: c.Pos, Table: "(transaction " + c.TxnID + ")",
				Reason: fmt.Sprintf("the transaction's END event counts %d events, but %d arrived in partition %s before it", c.TxnEvents, got, part),
				Hint:   "events of the transaction are missing or were sent to another partition; a whole transaction must be read from one partition (check the source's topic routing and retention)"}
		}
		*ot = openTxn{}
		return nil, nil
	}
	e := l.e
	e.countEvent(c.Kind)
	e.hookChange(c)
	t, err := e.tableFor(ctx, c)
	if err != nil {
		if !(e.deadLettering() && isBadInput(err)) {
			return nil, err
		}
		// Under the dead-letter policy the transaction is quarantined
		// when it is committed, whole.
		t = nil
	}
	if c.TxnID == "" {
		c.TxnEnd = c.TxnEnd || lastOfRecord
		return t, nil
	}
	if ot.id != c.TxnID {
		*ot = openTxn{id: c.TxnID}
	}
	ot.events++
	return t, nil
}

// rows counts the rows c adds to the plans to come, for
// buffer-flush.max-rows, as plain mode counts its buffer's rows: after
// per-key reduction. It is the count under the dead-letter policy, where
// nothing is reduced ahead (otherwise reduceEnding counts). A change of a
// key already counted since the machine last cut a plan adds none, since
// both will most likely reduce to one write; an update that moves a row
// to another key adds the row it leaves
// too. The count errs high where keys cannot be told apart cheaply (see
// reduce.Table.RowKey) and low only for a key whose earlier change a plan
// took while this one waited in an open transaction: a plan is then cut
// a few rows later, never bigger than its whole transactions make it
// anyway.
func (l *txnLoop) rows(t *reduce.Table, c *changelog.Change) int {
	if !c.Kind.Writes() {
		return 0
	}
	if t == nil {
		return 1
	}
	key, ok := t.RowKey(c.Image(), l.seed)
	if !ok {
		return 1
	}
	n := l.count(rowID{t, key})
	if c.Kind == changelog.UpdateAfter && !c.Before.IsZero() {
		if old, ok := t.RowKey(c.Before, l.seed); ok && old != key {
			n += l.count(rowID{t, old})
		}
	}
	return n
}

// count returns 1 for a row not counted yet, and notes it; 0 otherwise.
func (l *txnLoop) count(id rowID) int {
	if _, ok := l.seen[id]; ok {
		return 0
	}
	l.seen[id] = struct{}{}
	return 1
}

func (l *txnLoop) note() { l.e.noteBuffer(l.m.Bytes(), l.m.OpenTxns()) }

func (l *txnLoop) tick(ctx context.Context) error {
	// The machine's time-based work is due even while a plan commits,
	// when commitReady returns before Ready (which ticks it): a partition
	// quiet for the mini-switch interval switches its chunk now. Run's
	// timer fires at the deadline NextDeadline reports for that switch,
	// and a deadline left passed would fire it again at once, a busy loop
	// for as long as the commit takes.
	l.m.Tick(l.e.now())
	err := l.commitReady(ctx, false)
	l.note()
	return err
}

func (l *txnLoop) finish(ctx context.Context) error {
	err := l.commitReady(ctx, true)
	l.note()
	return err
}

func (l *txnLoop) deadline() (time.Time, bool) { return l.m.NextDeadline() }

// commitReady commits every plan the machine has ready, each as one
// target transaction. flush asks for every finished transaction now (end
// of input, shutdown); open transactions are left out and read again after
// a restart.
//
// While Run drives the loop, plans are committed on the committer's
// goroutine: the loop reduces a plan into a unit, hands it over and goes
// back to reading, and Advances the plan once the committer says it is
// committed (wake). One plan is in flight at a time, as the machine
// requires. Without a committer (the loop used on its own) commits are
// synchronous.
func (l *txnLoop) commitReady(ctx context.Context, flush bool) error {
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
		plan := l.m.Ready(l.e.now(), flush)
		if plan == nil {
			return nil
		}
		// The rows counted so far are in this plan (or, for open
		// transactions, counted already): count the next plan's afresh.
		clear(l.seen)
		u, txns, err := l.unit(ctx, plan)
		if err != nil {
			return err
		}
		switch {
		case u == nil:
			l.advance(plan)
		case l.e.async == nil:
			if err := l.e.commitUnit(ctx, u, plan.Reason.String(), txns); err != nil {
				return err
			}
			l.advance(plan)
		default:
			l.inflight = plan
			if err := l.e.async.submit(pendingUnit{u: u, reason: plan.Reason.String(), txns: txns, done: l.signal}); err != nil {
				return err
			}
		}
	}
}

// advance tells the machine the plan in flight is done with, which drops
// its changes, and recycles the arenas they were decoded into: within a
// partition a plan takes the oldest finished transactions, so every change
// at or before the plan's last one in a partition is dropped, and an arena
// whose changes all lie there, in every partition it holds changes of, is
// no one's. The unit holds copies (reduce detaches what it buffers).
func (l *txnLoop) advance(plan *txn.Plan) {
	var ends []changelog.Position
	for _, ck := range plan.Chunks {
		if len(ck) > 0 {
			pos := ck[len(ck)-1].Pos
			if n := len(ends); n > 0 && ends[n-1].Partition == pos.Partition {
				ends[n-1] = pos // a plan lists each partition's chunks together
			} else {
				ends = append(ends, pos)
			}
		}
	}
	l.m.Advance(plan)
	for _, end := range ends {
		l.advanced[end.Partition] = max(l.advanced[end.Partition], end.Offset)
	}
	l.release()
}

// hold keeps mem, the arena of the changes noted in unheld, until the
// machine holds none of them.
func (l *txnLoop) hold(mem *changelog.Arena) {
	l.held = append(l.held, heldArena{mem: mem, ends: l.unheld})
	l.unheld = nil
}

// release recycles the held arenas none of whose changes the machine
// holds any more.
func (l *txnLoop) release() {
	kept := l.held[:0]
	for _, h := range l.held {
		done := true
		for _, end := range h.ends {
			if at, ok := l.advanced[end.Partition]; !ok || at < end.Offset {
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

// unit reduces a plan's changes per key into the unit that applies them,
// with the plan's progress, in one target transaction, and returns it with
// the number of source transactions it commits (nil: nothing to apply).
// The unit is the merge, in the plan's order, of its partitions'
// transactions reduced as they ended; a partition whose reduction ahead
// does not hold exactly the plan's part of it (a plan can leave finished
// transactions for the next) has that part reduced now.
func (l *txnLoop) unit(ctx context.Context, plan *txn.Plan) (*commit.Unit, int, error) {
	var u *commit.Unit
	var skipped int
	if l.e.deadLettering() {
		var err error
		if u, skipped, err = l.reduce(ctx, plan.Chunks); err != nil {
			return nil, 0, err
		}
	} else {
		var merged *reduce.Buffer
		for chunks := plan.Chunks; len(chunks) > 0; {
			// A plan lists each partition's chunks together.
			part := chunks[0][0].Pos.Partition
			n, planned := 0, 0
			for n < len(chunks) && chunks[n][0].Pos.Partition == part {
				planned += len(chunks[n])
				n++
			}
			b, sk, err := l.partUnit(ctx, part, chunks[:n], planned)
			if err != nil {
				return nil, 0, err
			}
			skipped += sk
			if merged == nil {
				merged = b
			} else {
				merged.Merge(b)
			}
			chunks = chunks[n:]
		}
		if merged != nil {
			u = merged.Take()
		}
	}
	if skipped > 0 {
		l.e.mu.Lock()
		l.e.stats.Skipped += int64(skipped)
		l.e.mu.Unlock()
	}
	if u == nil {
		return nil, 0, nil
	}
	return u, plan.Txns - len(u.DeadLetters), nil
}

// partUnit returns the buffer holding one partition's part of the plan in
// flight, chunks of planned changes, reduced, and how many of them belong
// to skipped tables.
func (l *txnLoop) partUnit(ctx context.Context, part string, chunks [][]*changelog.Change, planned int) (*reduce.Buffer, int, error) {
	ra := l.aheadOf(part)
	if !ra.broken && ra.changes == planned {
		sk := ra.skipped
		ra.changes, ra.skipped = 0, 0
		return ra.buf, sk, nil
	}
	l.reducedAtCut++
	b := reduce.NewBuffer(l.e.cfg.Name)
	skipped := 0
	now := l.e.clock.Now()
	for _, changes := range chunks {
		sk, err := l.add(ctx, b, changes, now)
		if err != nil {
			return nil, 0, err
		}
		skipped += sk
	}
	// What the partition reduced ahead is more than the plan holds, or
	// broken: reduce again what the plan left, its finished transactions
	// now outside any plan.
	left := ra.changes - planned
	ra.buf.Take()
	ra.changes, ra.skipped, ra.broken = 0, 0, false
	for _, changes := range l.m.FinishedTail(part, left) {
		l.reduceAhead(ctx, ra, changes)
	}
	return b, skipped, nil
}

// aheadOf returns the partition's reduction ahead, made on first use.
func (l *txnLoop) aheadOf(part string) *reducedAhead {
	ra := l.ahead[part]
	if ra == nil {
		ra = &reducedAhead{buf: reduce.NewBuffer(l.e.cfg.Name)}
		l.ahead[part] = ra
	}
	return ra
}

// reduceEnding reduces the transaction c ends, the open transaction of its
// partition with c, into the partition's reduction ahead, before c is
// stepped, and returns the rows it adds there, for the
// machine's CommitRows. The count is exact within the partition: keys the
// partition's finished transactions wrote already add none. Under the
// dead-letter policy nothing is reduced ahead (see rows).
func (l *txnLoop) reduceEnding(ctx context.Context, c *changelog.Change) int {
	part := c.Pos.Partition
	ra := l.aheadOf(part)
	open := l.m.Open(part)
	before := ra.buf.Rows()
	l.reduceAhead(ctx, ra, open)
	end := [1]*changelog.Change{c}
	l.reduceAhead(ctx, ra, end[:])
	if ra.broken {
		// No count after reduction: count each row-writing change.
		rows := 0
		for _, o := range open {
			if o.Kind.Writes() {
				rows++
			}
		}
		if c.Kind.Writes() {
			rows++
		}
		return rows
	}
	return ra.buf.Rows() - before
}

// reduceAhead reduces changes, which end a transaction or continue one
// that does, into the partition's reduction ahead. A change that cannot be
// reduced breaks it until the plan holding that change is cut, which
// reduces the plan's part itself and reports the error, as without
// reducing ahead.
func (l *txnLoop) reduceAhead(ctx context.Context, ra *reducedAhead, changes []*changelog.Change) {
	ra.changes += len(changes)
	if ra.broken {
		return
	}
	sk, err := l.add(ctx, ra.buf, changes, l.e.now())
	if err != nil {
		ra.broken = true
		return
	}
	ra.skipped += sk
}

// forget drops what the partition reduced ahead, for a partition given up
// whose buffered changes the machine dropped (txn.Machine.Drop).
func (l *txnLoop) forget(part string) {
	delete(l.ahead, part)
	// Its open transaction is read again from the stored progress, by
	// the new owner or by this loop: counted on, its events would count
	// twice against its END's event count.
	delete(l.open, part)
	l.lastOpen = nil
	// The machine dropped the partition's changes: the arenas wait for
	// the other partitions only, and a new owner's offsets start afresh.
	delete(l.advanced, part)
	for i := range l.held {
		l.held[i].ends = slices.DeleteFunc(l.held[i].ends, func(p changelog.Position) bool { return p.Partition == part })
	}
	l.unheld = slices.DeleteFunc(l.unheld, func(p changelog.Position) bool { return p.Partition == part })
	l.release()
}

// reduce reduces changes, runs of whole source transactions, per key into
// one unit (nil: nothing to apply), and counts the changes of skipped
// tables. Under the dead-letter policy a source transaction with a change
// that cannot be applied is quarantined whole, in the same unit, and the
// others go on.
func (l *txnLoop) reduce(ctx context.Context, chunks [][]*changelog.Change) (*commit.Unit, int, error) {
	e := l.e
	buf := reduce.NewBuffer(e.cfg.Name)
	now := e.clock.Now()
	skipped := 0
	for _, changes := range chunks {
		for start := 0; start < len(changes); {
			end := start
			for end < len(changes) && !changes[end].TxnEnd {
				end++
			}
			end = min(end+1, len(changes)) // chunks hold whole transactions
			txnChanges := changes[start:end]
			start = end
			if e.deadLettering() {
				if bad, err := l.firstBad(ctx, buf, txnChanges); err != nil {
					return nil, 0, err
				} else if bad != nil {
					l.quarantine(buf, txnChanges, bad, now)
					continue
				}
			}
			sk, err := l.add(ctx, buf, txnChanges, now)
			if err != nil {
				return nil, 0, err
			}
			skipped += sk
		}
	}
	return buf.Take(), skipped, nil
}

// add adds changes to buf, and returns how many of them belong to
// skipped tables.
func (l *txnLoop) add(ctx context.Context, buf *reduce.Buffer, changes []*changelog.Change, now time.Time) (int, error) {
	skipped := 0
	for _, c := range changes {
		if c.Kind == changelog.EndTxn {
			buf.Skip(c.Pos, now)
			continue
		}
		t, err := l.e.tableFor(ctx, c)
		if err != nil {
			return 0, err
		}
		if t == nil {
			skipped++
			buf.Skip(c.Pos, now)
			continue
		}
		if err := buf.Add(t, c, now); err != nil {
			return 0, err
		}
	}
	return skipped, nil
}

// badChange is a change a transaction cannot be applied with.
type badChange struct {
	c   *changelog.Change
	err error
}

// firstBad returns the first change of a transaction that would be
// refused, or nil; an error that is not about the input is returned as is.
func (l *txnLoop) firstBad(ctx context.Context, buf *reduce.Buffer, changes []*changelog.Change) (*badChange, error) {
	for _, c := range changes {
		if c.Kind == changelog.EndTxn {
			continue
		}
		t, err := l.e.tableFor(ctx, c)
		if err == nil && t != nil {
			err = buf.Check(t, c)
		}
		if err != nil {
			if !isBadInput(err) {
				return nil, err
			}
			return &badChange{c, err}, nil
		}
	}
	return nil, nil
}

// quarantine records a whole source transaction as a dead letter: each of
// its changes as a txsink-json line (they can be fixed and fed again), the
// position of the bad one, and why.
func (l *txnLoop) quarantine(buf *reduce.Buffer, changes []*changelog.Change, bad *badChange, now time.Time) {
	// buf.Skip moves progress past each change; DeadLetter records the lot.
	var raw []byte
	for _, c := range changes {
		if line, err := native.Append(raw, c); err == nil {
			raw = line
		}
		buf.Skip(c.Pos, now)
	}
	l.e.deadLetterInto(buf, commit.DeadLetter{Pos: bad.c.Pos, TxnID: bad.c.TxnID, Raw: raw, Reason: bad.err.Error()})
}
