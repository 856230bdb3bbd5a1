package txn

import (
	"cmp"
	"fmt"
	"time"

	"github.com/txsink/txsink/changelog"
)

// Pressure says how full the buffer is, and what the engine must do about
// it. Read it with Machine.Pressure.
type Pressure uint8

// The pressure levels, from least to most full.
const (
	// PressureNone: Bytes() < BufferSize. Nothing to do.
	PressureNone Pressure = iota
	// PressureSoft: Bytes() >= BufferSize. Every finished source
	// transaction freezes at once, and Ready cuts a plan without waiting
	// for CommitInterval. The engine keeps reading.
	PressureSoft
	// PressureHard: Bytes() >= 2×BufferSize and a commit can free memory
	// (a plan is in flight, or some source transaction is finished). Step
	// returns ErrBackPressure; the engine MUST stop reading until the level
	// drops, committing plans meanwhile.
	PressureHard
	// PressureOverrun: Bytes() >= 2×BufferSize but everything buffered
	// belongs to open source transactions. No commit can free anything, so
	// stopping the source would wait forever; the engine keeps reading
	// until a transaction ends and SHOULD log a warning (the seed's "Write-
	// block cap reached with nothing flushable"). Config.MaxTxnBytes is the
	// bound that turns this into an error.
	PressureOverrun
)

// String returns "none", "soft", "hard" or "overrun".
func (p Pressure) String() string {
	switch p {
	case PressureNone:
		return "none"
	case PressureSoft:
		return "soft"
	case PressureHard:
		return "hard"
	case PressureOverrun:
		return "overrun"
	}
	return fmt.Sprintf("Pressure(%d)", uint8(p))
}

// keptOpen is the most pointers a partition's array of open changes
// keeps, for the next transaction, once its transaction ends.
const keptOpen = 4096

// chunk is a frozen run of whole source transactions of one partition.
type chunk[T any] struct {
	value   T // what the caller kept of them (see Machine.Finished)
	changes int
	last    changelog.Position // of the last change, a transaction end
	rows    int                // the changes that write a row (Kind.Writes), for CommitRows
	bytes   int64
	txns    int
}

// partition is the state of one source partition.
//
// Invariant: open holds the changes of the open transaction, if any; the
// finished transactions that have not frozen yet (the seed's clean part of
// the active chunk) are held as the caller's value clean, with counts
// (cleanTxns > 0 when there are any); openRows and cleanRows count the
// changes of each part that write a row (Kind.Writes). frozen holds chunks
// in source order; when a plan is in flight its first chunks belong to it.
type partition[T any] struct {
	name         string
	open         []*changelog.Change
	clean        T
	cleanChanges int
	cleanLast    changelog.Position
	cleanRows    int
	cleanBytes   int64
	cleanTxns    int
	openRows     int
	openBytes    int64
	openID       string    // TxnID of the open transaction, "" if unknown
	lastEnd      time.Time // when the last transaction end arrived
	lastSwitch   time.Time
	switched     bool // lastSwitch is set; before the first switch every end switches (seed: lastSwitchTimeMs starts at 0)
	frozen       []chunk[T]
}

// Machine is the source-transaction state machine of one pipeline. It is
// pure (no goroutines, clock, randomness or I/O) and not safe for
// concurrent use: one engine goroutine drives it.
//
// The Machine holds the changes of each partition's open transaction
// only. Of finished transactions it keeps counts and a value of type T
// that the caller builds as each transaction ends (see Finished): the
// engine's per-key reduction of them, so that the decoded changes, and
// the memory they were decoded into, can go as soon as their transaction
// is reduced. A plan hands those values back, one per chunk.
type Machine[T any] struct {
	cfg    Config
	parts  []*partition[T] // first-seen order; plans list partitions in it
	byName map[string]*partition[T]
	// last is the partition stepped last: a partition's changes come in
	// runs, so most steps find theirs without hashing its name.
	last   *partition[T]
	bytes  int64
	frozen int // frozen chunks not in the plan in flight
	// doneRows and doneBytes sum the finished transactions not in the
	// plan in flight (frozen chunks and the clean parts of active chunks),
	// for CommitRows and CommitBytes. doneRows counts the changes that
	// write a row (Kind.Writes): an update is one, as in plain mode, and
	// an END none.
	doneRows   int
	doneBytes  int64
	cleanParts int // partitions with finished transactions not frozen
	now        time.Time
	// lastCommit is when the last plan was cut; before the first one, the
	// first instant the Machine was told of, so the first commit comes one
	// interval after start and batches what arrived meanwhile (the seed's
	// example commits K1+K2+K3 together).
	lastCommit time.Time
	started    bool // m.now and lastCommit are set
	inFlight   *Plan[T]
}

// New returns an empty Machine whose callers keep a T for each run of
// finished transactions (see Finished), or an error naming the YAML key of
// the first invalid field of cfg.
func New[T any](cfg Config) (*Machine[T], error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Machine[T]{cfg: cfg, byName: map[string]*partition[T]{}}, nil
}

// Config returns the configuration the Machine was built with.
func (m *Machine[T]) Config() Config { return m.cfg }

func (m *Machine[T]) observe(now time.Time) {
	if !m.started {
		m.now, m.lastCommit, m.started = now, now, true
	}
	if now.After(m.now) {
		m.now = now
	}
}

func (m *Machine[T]) partition(name string) *partition[T] {
	if p := m.last; p != nil && p.name == name {
		return p
	}
	p := m.byName[name]
	if p == nil {
		p = &partition[T]{name: name}
		m.byName[name] = p
		m.parts = append(m.parts, p)
	}
	m.last = p
	return p
}

// Step adds one change read at time now. Changes of one partition MUST be
// stepped in source order; a change with TxnEnd set closes its
// partition's open source transaction, which then belongs to the
// partition's finished transactions (see Finished).
//
// Step returns nil, ErrBackPressure (c WAS accepted; stop reading, see
// Pressure), or an *Error (c was NOT accepted and the Machine is unchanged;
// the pipeline must stop, committing nothing past its last commit):
// ErrMaxTxnBytes when the partition's open transaction would exceed
// Config.MaxTxnBytes, ErrInterleaved when c belongs to another transaction
// than the open one. Step may be called while a plan is in flight.
//
// For CommitRows, Step counts c as one row when it can write one
// (Kind.Writes); StepCounted takes the caller's count instead.
//
// Step keeps a copy of c; StepCounted keeps the caller's change itself.
func (m *Machine[T]) Step(c changelog.Change, now time.Time) error {
	rows := 0
	if c.Kind.Writes() {
		rows = 1
	}
	return m.StepCounted(&c, rows, now)
}

// StepCounted is Step with the caller's count of the rows c adds, for
// CommitRows. The Machine knows no keys, so it cannot tell that a change
// rewrites a row an earlier change already counts; an engine that can
// tells it so by counting that change 0, and CommitRows then counts rows
// after per-key reduction, as plain mode's max-rows does. The count only
// decides when a plan is cut: any count keeps every other guarantee.
//
// The Machine keeps c itself, not a copy, while its transaction is open
// (see Open), and lets go of it, and of the open transaction's other
// changes, when the transaction ends: the caller must not change *c
// meanwhile. Copying each change (208 bytes) into the Machine's arrays,
// and again as they grew, was a tenth of transaction mode's CPU on the
// bench's txn workload.
func (m *Machine[T]) StepCounted(c *changelog.Change, rows int, now time.Time) error {
	p := m.partition(c.Pos.Partition)
	size := int64(max(c.Size, 0))
	if len(p.open) > 0 && p.openID != "" && c.TxnID != "" && c.TxnID != p.openID {
		return &Error{Partition: p.name, TxnID: p.openID, Other: c.TxnID, Pos: c.Pos, Start: p.open[0].Pos, Err: ErrInterleaved}
	}
	if m.cfg.MaxTxnBytes > 0 && p.openBytes+size > m.cfg.MaxTxnBytes {
		e := &Error{Partition: p.name, TxnID: cmp.Or(p.openID, c.TxnID), Pos: c.Pos, Bytes: p.openBytes + size, Limit: m.cfg.MaxTxnBytes, Err: ErrMaxTxnBytes}
		if len(p.open) > 0 {
			e.Start = p.open[0].Pos
		}
		return e
	}
	m.observe(now)
	p.openRows += max(rows, 0)
	p.openBytes += size
	m.bytes += size
	if p.openID == "" {
		p.openID = c.TxnID
	}
	if !c.TxnEnd {
		p.open = append(p.open, c)
	} else {
		if p.cleanTxns == 0 {
			m.cleanParts++
		}
		m.doneRows += p.openRows
		m.doneBytes += p.openBytes
		p.cleanChanges += len(p.open) + 1
		p.cleanLast = c.Pos
		p.cleanRows += p.openRows
		p.cleanBytes += p.openBytes
		p.cleanTxns++
		// The caller has what it keeps of the transaction (Finished):
		// its changes, and what they point into, can go.
		clear(p.open)
		p.open = p.open[:0]
		if cap(p.open) > keptOpen {
			// One long transaction does not keep its array for good.
			p.open = nil
		}
		p.openRows, p.openBytes = 0, 0
		p.openID = ""
		p.lastEnd = now
		if m.switchAtEnd(p, now) {
			m.freeze(p, now)
		}
	}
	if m.Pressure() == PressureHard {
		return ErrBackPressure
	}
	return nil
}

// Finished returns the caller's value for the named partition's finished
// source transactions that have not frozen yet: the zero T after each
// freeze, and before the partition's first transaction ends. The caller
// adds a transaction to it before it steps the transaction's end (the
// changes are Open's, then the end itself); from that end on the value
// stands for the transaction, freezes with it and comes back in the plan
// that holds it (Plan.Chunks). A refused end (Step's *Error) stops the
// pipeline, so what the caller added for it is never committed.
//
// The pointer is valid until the partition is dropped; the next freeze
// moves the value into a chunk and leaves the zero T behind.
func (m *Machine[T]) Finished(name string) *T {
	return &m.partition(name).clean
}

// switchAtEnd is the seed's tryMiniIntervalSwitch, run when a transaction
// of p has just ended: may p's active chunk freeze now?
func (m *Machine[T]) switchAtEnd(p *partition[T], now time.Time) bool {
	if m.bytes >= m.cfg.BufferSize {
		// Memory is short: make everything finished committable at once,
		// so the commit Ready is about to cut frees as much as possible.
		return true
	}
	if !p.switched {
		return true
	}
	since := now.Sub(p.lastSwitch)
	if since < m.cfg.MiniSwitchInterval {
		return false // batch with the transactions still to come (N:1)
	}
	return m.cfg.MinSwitchBytes <= 0 ||
		p.cleanBytes >= m.cfg.MinSwitchBytes ||
		// A trickle below min-switch-bytes still switches about once per
		// commit interval, so it is never held back indefinitely.
		(m.cfg.CommitInterval > 0 && since >= m.cfg.CommitInterval) ||
		// The seed bypasses the threshold once half the buffer is used.
		2*m.bytes >= m.cfg.BufferSize
}

// freeze moves p's finished transactions, and the caller's value for them,
// into a new frozen chunk; the open transaction, if any, stays active.
func (m *Machine[T]) freeze(p *partition[T], now time.Time) {
	p.frozen = append(p.frozen, chunk[T]{value: p.clean, changes: p.cleanChanges, last: p.cleanLast,
		rows: p.cleanRows, bytes: p.cleanBytes, txns: p.cleanTxns})
	m.frozen++
	m.cleanParts--
	var zero T
	p.clean = zero
	p.cleanChanges, p.cleanRows, p.cleanBytes, p.cleanTxns = 0, 0, 0, 0
	p.lastSwitch, p.switched = now, true
}

// Tick freezes by time: the finished transactions of a partition whose last
// transaction end is at least MiniSwitchInterval old (the seed's source-idle
// fallback, tryForceCleanSwitch), and, under memory pressure
// (Bytes() >= BufferSize), every partition's finished transactions. Ready
// calls Tick first, so an engine that calls Ready at NextDeadline need not
// call Tick itself.
//
// The seed freezes only a chunk that is clean (its last change is an end).
// Because a chunk here can be split at its last end, Tick also freezes the
// finished transactions in front of an open one: a long transaction does
// not hold back the ones that ended before it, which keeps the freshness
// budget of CommitInterval + MiniSwitchInterval.
func (m *Machine[T]) Tick(now time.Time) {
	m.observe(now)
	if m.cleanParts == 0 {
		return
	}
	pressure := m.bytes >= m.cfg.BufferSize
	for _, p := range m.parts {
		if p.cleanTxns > 0 && (pressure || now.Sub(p.lastEnd) >= m.cfg.MiniSwitchInterval) {
			m.freeze(p, now)
		}
	}
}

// Ready returns the next plan to commit, or nil. It first runs Tick(now);
// with flush set it also freezes every partition's finished transactions
// regardless of timing (end of input, shutdown).
//
// A plan is cut when no plan is in flight, some chunk is frozen, and one of:
// flush is set (Reason Flush); Bytes() >= BufferSize (BufferFull);
// CommitInterval > 0 and it has passed since the last plan was cut (or,
// before the first plan, since the first Step, Tick or Ready) (Interval). The plan takes every frozen chunk of every
// partition, so one partition's open transaction never holds back
// another's finished ones.
//
// After a plan is returned, Ready returns nil until Advance(plan). Open
// transactions are never in a plan: at shutdown, loop Ready(now, true),
// commit and Advance until Ready returns nil; what remains (OpenTxns) is
// dropped with the Machine and read again after restart, since the stored
// progress does not cover it.
func (m *Machine[T]) Ready(now time.Time, flush bool) *Plan[T] {
	m.Tick(now)
	// Enough finished transactions for a commit of CommitRows rows or
	// CommitBytes: freeze them all now, without waiting for the
	// mini-switch interval, as a flush would.
	if (flush || (m.inFlight == nil && m.sizeDue())) && m.cleanParts > 0 {
		for _, p := range m.parts {
			if p.cleanTxns > 0 {
				m.freeze(p, now)
			}
		}
	}
	if m.inFlight != nil || m.frozen == 0 {
		return nil
	}
	var reason Reason
	switch {
	case flush:
		reason = Flush
	case m.bytes >= m.cfg.BufferSize:
		reason = BufferFull
	case m.sizeDue():
		reason = Size
	case m.cfg.CommitInterval > 0 && now.Sub(m.lastCommit) >= m.cfg.CommitInterval:
		reason = Interval
	default:
		return nil
	}
	parts, chunks, rows := 0, 0, 0
	for _, p := range m.parts {
		if len(p.frozen) > 0 {
			parts++
			chunks += len(p.frozen)
			for _, ck := range p.frozen {
				rows += ck.rows
			}
		}
	}
	pl := &Plan[T]{
		Reason:   reason,
		Chunks:   make([]Chunk[T], 0, chunks),
		Progress: make([]changelog.Position, 0, parts),
		parts:    make([]planPart[T], 0, parts),
	}
	for _, p := range m.parts {
		if len(p.frozen) == 0 {
			continue
		}
		for _, ck := range p.frozen {
			pl.Chunks = append(pl.Chunks, Chunk[T]{Value: ck.value, Last: ck.last, Changes: ck.changes, Txns: ck.txns, Bytes: ck.bytes})
			pl.Changes += ck.changes
			pl.Txns += ck.txns
			pl.Bytes += ck.bytes
		}
		pl.Progress = append(pl.Progress, p.frozen[len(p.frozen)-1].last)
		pl.parts = append(pl.parts, planPart[T]{p: p, chunks: len(p.frozen)})
	}
	m.frozen = 0
	m.doneRows -= rows
	m.doneBytes -= pl.Bytes
	m.inFlight = pl
	// The interval runs from cutting the plan, not from its commit, so a
	// slow commit does not stretch the cadence.
	m.lastCommit = now
	return pl
}

// Advance tells the Machine that p was committed: its memory is freed and
// Ready may cut the next plan. It MUST be called exactly once per plan,
// only AFTER the target transaction holding p's changes and progress
// committed, with the plan Ready returned; anything else is a bug in the
// caller and panics.
//
// There is no way to hand a plan back: a failed commit is retried with the
// same plan, whole, or the pipeline stops and the Machine is discarded
// (the progress table, not the Machine, is what a restart trusts).
func (m *Machine[T]) Advance(p *Plan[T]) {
	if p == nil || p != m.inFlight {
		panic("txn: Advance called with a plan that is not the one in flight")
	}
	for _, pp := range p.parts {
		for i := range pp.p.frozen[:pp.chunks] {
			m.bytes -= pp.p.frozen[i].bytes
		}
		clear(pp.p.frozen[:pp.chunks]) // let the chunks' values go
		pp.p.frozen = pp.p.frozen[pp.chunks:]
		if len(pp.p.frozen) == 0 {
			pp.p.frozen = nil
		}
	}
	m.inFlight = nil
}

// unplanned returns p's frozen chunks that are not in the plan in flight.
func (m *Machine[T]) unplanned(p *partition[T]) []chunk[T] {
	if m.inFlight != nil {
		for _, pp := range m.inFlight.parts {
			if pp.p == p {
				return p.frozen[pp.chunks:]
			}
		}
	}
	return p.frozen
}

// Frozen returns how many frozen chunks are not in the plan in flight:
// what EachFrozen would visit.
func (m *Machine[T]) Frozen() int { return m.frozen }

// EachFrozen calls f with the value of every frozen chunk that is not in
// the plan in flight — what the next plan will take — partition by
// partition in the order plans list them, each partition's in source
// order, until f returns false. An engine that loads chunks into the
// next commit's target transaction ahead of it (autonomous flush) finds
// them here; f must not call the Machine.
func (m *Machine[T]) EachFrozen(f func(v T) bool) {
	if m.frozen == 0 {
		return
	}
	for _, p := range m.parts {
		for _, ck := range m.unplanned(p) {
			if !f(ck.value) {
				return
			}
		}
	}
}

// Open returns the changes of the named partition's open source
// transaction, in source order (none when it has no open transaction): an
// engine that reduces each transaction as it ends reads them before it
// steps the end.
//
// The slice is the Machine's own: read it only, and only until the next
// Step, Ready, Advance or Drop.
func (m *Machine[T]) Open(name string) []*changelog.Change {
	p := m.byName[name]
	if p == nil {
		return nil
	}
	return p.open[:len(p.open):len(p.open)]
}

// InFlight returns the plan cut by Ready and not yet advanced, or nil.
func (m *Machine[T]) InFlight() *Plan[T] { return m.inFlight }

// Bytes returns the buffered bytes: the sum of changelog.Change.Size over
// every change stepped and not yet advanced (open, finished, frozen and in
// flight alike).
func (m *Machine[T]) Bytes() int64 { return m.bytes }

// OpenTxns returns how many partitions have an open (unfinished) source
// transaction.
func (m *Machine[T]) OpenTxns() int {
	n := 0
	for _, p := range m.parts {
		if len(p.open) > 0 {
			n++
		}
	}
	return n
}

// OpenTxn is one partition's open source transaction: read in part, its
// end not yet.
type OpenTxn struct {
	// Partition is the partition it is read from.
	Partition string
	// ID is its transaction id, "" when the format carries none.
	ID string
	// Start and Last are where its first and its last change so far were
	// read.
	Start, Last changelog.Position
	// Changes and Bytes count its changes so far and their Size.
	Changes int
	Bytes   int64
}

// AppendOpen appends to dst the open source transactions, at most one per
// partition, in the order the partitions were first stepped, and returns
// it. None of them is in a plan, and none is until its end is stepped: at
// shutdown they are what the stored progress does not cover.
func (m *Machine[T]) AppendOpen(dst []OpenTxn) []OpenTxn {
	for _, p := range m.parts {
		if len(p.open) == 0 {
			continue
		}
		dst = append(dst, OpenTxn{Partition: p.name, ID: p.openID, Start: p.open[0].Pos, Last: p.open[len(p.open)-1].Pos,
			Changes: len(p.open), Bytes: p.openBytes})
	}
	return dst
}

// Pressure returns the buffer's fill level; see the Pressure constants for
// what the engine must do at each.
func (m *Machine[T]) Pressure() Pressure {
	switch {
	case m.bytes < m.cfg.BufferSize:
		return PressureNone
	case m.bytes < 2*m.cfg.BufferSize:
		return PressureSoft
	case m.inFlight != nil || m.frozen > 0 || m.cleanParts > 0:
		return PressureHard
	}
	return PressureOverrun
}

// SizeDue reports whether the finished transactions not in the plan in
// flight reach CommitRows rows or CommitBytes: with no plan in flight,
// Ready cuts one now. An engine that commits on another goroutine waits for the
// plan in flight when SizeDue holds, rather than read on, so that commits
// stay near that size and memory near two plans, as in plain mode.
func (m *Machine[T]) SizeDue() bool { return m.sizeDue() }

// BytesDue reports whether the finished transactions not in the plan in
// flight reach CommitBytes. An engine that lets the next plan grow while
// one is in flight (buffer-flush.coalesce) waits for it only then.
func (m *Machine[T]) BytesDue() bool {
	return m.cfg.CommitBytes > 0 && m.doneBytes >= m.cfg.CommitBytes
}

func (m *Machine[T]) sizeDue() bool {
	return (m.cfg.CommitRows > 0 && m.doneRows >= m.cfg.CommitRows) || m.BytesDue()
}

// NextDeadline returns the earliest instant at which Tick or Ready has
// something to do, so the engine can keep a single timer; ok is false when
// nothing will happen until the next Step (or Advance). Before the deadline,
// Tick and Ready(now, false) do nothing; at or after it, they freeze a chunk
// or cut a plan. A deadline at or before the current time means "now".
// While a plan is in flight only freezing counts: call NextDeadline again
// after Advance.
func (m *Machine[T]) NextDeadline() (deadline time.Time, ok bool) {
	set := func(t time.Time) {
		if !ok || t.Before(deadline) {
			deadline, ok = t, true
		}
	}
	pressure := m.bytes >= m.cfg.BufferSize
	if m.cleanParts > 0 {
		for _, p := range m.parts {
			if p.cleanTxns == 0 {
				continue
			}
			if pressure {
				set(m.now)
			} else {
				set(p.lastEnd.Add(m.cfg.MiniSwitchInterval))
			}
		}
	}
	if m.inFlight == nil && m.sizeDue() {
		set(m.now)
	}
	if m.inFlight == nil && m.frozen > 0 {
		switch {
		case pressure:
			set(m.now)
		case m.cfg.CommitInterval > 0:
			set(m.lastCommit.Add(m.cfg.CommitInterval))
		}
	}
	return deadline, ok
}
