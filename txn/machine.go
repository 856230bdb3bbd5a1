package txn

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
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

// Region is the observable accounting of one (partition, table) pair: what
// the Machine buffers for it, frozen or not. Regions are for metrics and
// logs; the unit of freezing and committing is the whole partition, because
// a relational target commits all tables of a source transaction in one
// target transaction.
type Region struct {
	// Partition is the source partition.
	Partition string
	// Table is the source table, as the changes name it.
	Table changelog.Table
	// Changes counts the buffered changes (before reduction).
	Changes int
	// Bytes sums their changelog.Change.Size.
	Bytes int64
}

type regionKey struct {
	partition string
	table     changelog.Table
}

// chunk is a frozen run of whole source transactions of one partition.
type chunk struct {
	changes []*changelog.Change
	rows    int // the changes that write a row (Kind.Writes), for CommitRows
	bytes   int64
	txns    int
}

// partition is the state of one source partition.
//
// Invariant: active[:clean] are whole finished source transactions that
// have not frozen yet (the seed's clean part of the active chunk);
// active[clean:] is the open transaction, if any; cleanRows and openRows
// count the changes of each part that write a row (Kind.Writes). frozen
// holds chunks in source order; when a plan is in flight its first chunks
// belong to it.
type partition struct {
	name       string
	active     []*changelog.Change
	clean      int
	cleanRows  int
	cleanBytes int64
	cleanTxns  int
	openRows   int
	openBytes  int64
	openID     string    // TxnID of the open transaction, "" if unknown
	lastEnd    time.Time // when active[clean-1] (a transaction end) arrived
	lastSwitch time.Time
	switched   bool // lastSwitch is set; before the first switch every end switches (seed: lastSwitchTimeMs starts at 0)
	frozen     []chunk
}

// Machine is the source-transaction state machine of one pipeline. It is
// pure (no goroutines, clock, randomness or I/O) and not safe for
// concurrent use: one engine goroutine drives it.
type Machine struct {
	cfg    Config
	parts  []*partition // first-seen order; plans list partitions in it
	byName map[string]*partition
	// last is the partition stepped last: a partition's changes come in
	// runs, so most steps find theirs without hashing its name.
	last   *partition
	bytes  int64
	frozen int // frozen chunks not in the plan in flight
	// doneRows and doneBytes sum the finished transactions not in the
	// plan in flight (frozen chunks and the clean parts of active chunks),
	// for CommitRows and CommitBytes. doneRows counts the changes that
	// write a row (Kind.Writes): an update is one, as in plain mode, and
	// an END none.
	doneRows   int
	doneBytes  int64
	cleanParts int // partitions with clean > 0
	now        time.Time
	// lastCommit is when the last plan was cut; before the first one, the
	// first instant the Machine was told of, so the first commit comes one
	// interval after start and batches what arrived meanwhile (the seed's
	// example commits K1+K2+K3 together).
	lastCommit time.Time
	started    bool // m.now and lastCommit are set
	inFlight   *Plan
}

// New returns an empty Machine, or an error naming the YAML key of the
// first invalid field of cfg.
func New(cfg Config) (*Machine, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Machine{cfg: cfg, byName: map[string]*partition{}}, nil
}

// Config returns the configuration the Machine was built with.
func (m *Machine) Config() Config { return m.cfg }

func (m *Machine) observe(now time.Time) {
	if !m.started {
		m.now, m.lastCommit, m.started = now, now, true
	}
	if now.After(m.now) {
		m.now = now
	}
}

func (m *Machine) partition(name string) *partition {
	if p := m.last; p != nil && p.name == name {
		return p
	}
	p := m.byName[name]
	if p == nil {
		p = &partition{name: name}
		m.byName[name] = p
		m.parts = append(m.parts, p)
	}
	m.last = p
	return p
}

// Step adds one change read at time now, and takes ownership of it: the
// caller MUST NOT modify c's rows afterwards (they reappear in a Plan).
// Changes of one partition MUST be stepped in source order; a change with
// TxnEnd set closes its partition's open source transaction.
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
func (m *Machine) Step(c changelog.Change, now time.Time) error {
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
// The Machine keeps c itself, not a copy, until the plan holding it is
// advanced or its partition dropped: the caller must not change *c
// meanwhile. Copying each change (208 bytes) into the Machine's arrays,
// and again as they grew, was a tenth of transaction mode's CPU on the
// bench's txn workload.
func (m *Machine) StepCounted(c *changelog.Change, rows int, now time.Time) error {
	p := m.partition(c.Pos.Partition)
	size := int64(max(c.Size, 0))
	open := len(p.active) - p.clean
	if open > 0 && p.openID != "" && c.TxnID != "" && c.TxnID != p.openID {
		return &Error{Partition: p.name, TxnID: p.openID, Other: c.TxnID, Pos: c.Pos, Start: p.active[p.clean].Pos, Err: ErrInterleaved}
	}
	if m.cfg.MaxTxnBytes > 0 && p.openBytes+size > m.cfg.MaxTxnBytes {
		e := &Error{Partition: p.name, TxnID: cmp.Or(p.openID, c.TxnID), Pos: c.Pos, Bytes: p.openBytes + size, Limit: m.cfg.MaxTxnBytes, Err: ErrMaxTxnBytes}
		if open > 0 {
			e.Start = p.active[p.clean].Pos
		}
		return e
	}
	m.observe(now)
	p.active = append(p.active, c)
	p.openRows += max(rows, 0)
	p.openBytes += size
	m.bytes += size
	if p.openID == "" {
		p.openID = c.TxnID
	}
	if c.TxnEnd {
		if p.clean == 0 {
			m.cleanParts++
		}
		m.doneRows += p.openRows
		m.doneBytes += p.openBytes
		p.clean = len(p.active)
		p.cleanRows += p.openRows
		p.cleanBytes += p.openBytes
		p.cleanTxns++
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

// switchAtEnd is the seed's tryMiniIntervalSwitch, run when a transaction
// of p has just ended: may p's active chunk freeze now?
func (m *Machine) switchAtEnd(p *partition, now time.Time) bool {
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

// freeze moves p's finished transactions (active[:clean]) into a new frozen
// chunk; the open transaction, if any, stays active.
func (m *Machine) freeze(p *partition, now time.Time) {
	ck := chunk{changes: p.active[:p.clean:p.clean], rows: p.cleanRows, bytes: p.cleanBytes, txns: p.cleanTxns}
	tail := p.active[p.clean:]
	// The chunk keeps the old array; the open tail moves to a new one, so
	// appends never write into a chunk and a committed chunk's array is not
	// kept alive by a long open transaction. Each change is copied at most
	// once this way: a change in the tail is of a transaction that had not
	// ended, and the next freeze takes it only after it has.
	active := make([]*changelog.Change, len(tail), max(2*len(tail), len(ck.changes), 8))
	copy(active, tail)
	p.active = active
	p.frozen = append(p.frozen, ck)
	m.frozen++
	m.cleanParts--
	p.clean, p.cleanRows, p.cleanBytes, p.cleanTxns = 0, 0, 0, 0
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
func (m *Machine) Tick(now time.Time) {
	m.observe(now)
	if m.cleanParts == 0 {
		return
	}
	pressure := m.bytes >= m.cfg.BufferSize
	for _, p := range m.parts {
		if p.clean > 0 && (pressure || now.Sub(p.lastEnd) >= m.cfg.MiniSwitchInterval) {
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
func (m *Machine) Ready(now time.Time, flush bool) *Plan {
	m.Tick(now)
	// Enough finished transactions for a commit of CommitRows rows or
	// CommitBytes: freeze them all now, without waiting for the
	// mini-switch interval, as a flush would.
	if (flush || (m.inFlight == nil && m.sizeDue())) && m.cleanParts > 0 {
		for _, p := range m.parts {
			if p.clean > 0 {
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
	n, rows := 0, 0
	parts := 0
	for _, p := range m.parts {
		if len(p.frozen) > 0 {
			parts++
			for _, ck := range p.frozen {
				n += len(ck.changes)
				rows += ck.rows
			}
		}
	}
	pl := &Plan{
		Reason:   reason,
		Changes:  n,
		Progress: make([]changelog.Position, 0, parts),
		parts:    make([]planPart, 0, parts),
	}
	for _, p := range m.parts {
		if len(p.frozen) == 0 {
			continue
		}
		for _, ck := range p.frozen {
			pl.Chunks = append(pl.Chunks, ck.changes)
			pl.Txns += ck.txns
			pl.Bytes += ck.bytes
		}
		last := p.frozen[len(p.frozen)-1].changes
		pl.Progress = append(pl.Progress, last[len(last)-1].Pos)
		pl.parts = append(pl.parts, planPart{p: p, chunks: len(p.frozen)})
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
func (m *Machine) Advance(p *Plan) {
	if p == nil || p != m.inFlight {
		panic("txn: Advance called with a plan that is not the one in flight")
	}
	for _, pp := range p.parts {
		for i := range pp.p.frozen[:pp.chunks] {
			ck := &pp.p.frozen[i]
			m.bytes -= ck.bytes
		}
		clear(pp.p.frozen[:pp.chunks]) // let the chunks' arrays go
		pp.p.frozen = pp.p.frozen[pp.chunks:]
		if len(pp.p.frozen) == 0 {
			pp.p.frozen = nil
		}
	}
	m.inFlight = nil
}

// finished returns the changes of every finished source transaction that
// is not in the plan in flight, in the order a plan holds them (partitions
// in first-seen order, each in source order): what the next plan holds
// when Ready cuts it before anything more is stepped and it takes every
// finished transaction. The tests check FinishedTail against it.
func (m *Machine) finished() [][]*changelog.Change {
	var out [][]*changelog.Change
	for _, p := range m.parts {
		for _, ck := range m.unplanned(p) {
			out = append(out, ck.changes)
		}
		if p.clean > 0 {
			out = append(out, p.active[:p.clean:p.clean])
		}
	}
	return out
}

// unplanned returns p's frozen chunks that are not in the plan in flight.
func (m *Machine) unplanned(p *partition) []chunk {
	if m.inFlight != nil {
		for _, pp := range m.inFlight.parts {
			if pp.p == p {
				return p.frozen[pp.chunks:]
			}
		}
	}
	return p.frozen
}

// FinishedTail returns the last n changes of the named partition's
// finished source transactions that are not in the plan in flight, in
// source order (fewer when there are fewer). An
// engine that reduces each transaction as it ends (reading Open before it
// steps the end) asks for them when a plan took fewer of a partition's
// transactions than it reduced: what the plan left is to be reduced again.
// The walk starts from the newest change, so it costs what it returns.
//
// The slices are the Machine's own: read them only, and only until the
// next Step, Ready, Advance or Drop.
func (m *Machine) FinishedTail(name string, n int) [][]*changelog.Change {
	p := m.byName[name]
	if p == nil || n <= 0 {
		return nil
	}
	frozen := m.unplanned(p)
	var out [][]*changelog.Change
	take := func(changes []*changelog.Change) {
		k := min(n, len(changes))
		if k > 0 {
			out = append(out, changes[len(changes)-k:len(changes):len(changes)])
			n -= k
		}
	}
	take(p.active[:p.clean])
	for i := len(frozen) - 1; i >= 0 && n > 0; i-- {
		take(frozen[i].changes)
	}
	slices.Reverse(out)
	return out
}

// Open returns the changes of the named partition's open source
// transaction, in source order (none when it has no open transaction): an
// engine that reduces each transaction as it ends reads them before it
// steps the end.
//
// The slice is the Machine's own: read it only, and only until the next
// Step, Ready, Advance or Drop.
func (m *Machine) Open(name string) []*changelog.Change {
	p := m.byName[name]
	if p == nil {
		return nil
	}
	return p.active[p.clean:len(p.active):len(p.active)]
}

// InFlight returns the plan cut by Ready and not yet advanced, or nil.
func (m *Machine) InFlight() *Plan { return m.inFlight }

// Bytes returns the buffered bytes: the sum of changelog.Change.Size over
// every change stepped and not yet advanced (open, finished, frozen and in
// flight alike).
func (m *Machine) Bytes() int64 { return m.bytes }

// OpenTxns returns how many partitions have an open (unfinished) source
// transaction.
func (m *Machine) OpenTxns() int {
	n := 0
	for _, p := range m.parts {
		if len(p.active) > p.clean {
			n++
		}
	}
	return n
}

// Pressure returns the buffer's fill level; see the Pressure constants for
// what the engine must do at each.
func (m *Machine) Pressure() Pressure {
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
func (m *Machine) SizeDue() bool { return m.sizeDue() }

// BytesDue reports whether the finished transactions not in the plan in
// flight reach CommitBytes. An engine that lets the next plan grow while
// one is in flight (buffer-flush.coalesce) waits for it only then.
func (m *Machine) BytesDue() bool {
	return m.cfg.CommitBytes > 0 && m.doneBytes >= m.cfg.CommitBytes
}

func (m *Machine) sizeDue() bool {
	return (m.cfg.CommitRows > 0 && m.doneRows >= m.cfg.CommitRows) || m.BytesDue()
}

// NextDeadline returns the earliest instant at which Tick or Ready has
// something to do, so the engine can keep a single timer; ok is false when
// nothing will happen until the next Step (or Advance). Before the deadline,
// Tick and Ready(now, false) do nothing; at or after it, they freeze a chunk
// or cut a plan. A deadline at or before the current time means "now".
// While a plan is in flight only freezing counts: call NextDeadline again
// after Advance.
func (m *Machine) NextDeadline() (deadline time.Time, ok bool) {
	set := func(t time.Time) {
		if !ok || t.Before(deadline) {
			deadline, ok = t, true
		}
	}
	pressure := m.bytes >= m.cfg.BufferSize
	if m.cleanParts > 0 {
		for _, p := range m.parts {
			if p.clean == 0 {
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

// Regions returns the per-(partition, table) accounting of what is
// buffered, sorted by partition and table. It walks every buffered change:
// it is for logs and tests, and keeping the sums up to date instead cost
// two map updates per change, a quarter of the Machine's own time
// (BenchmarkStepReadyAdvance).
func (m *Machine) Regions() []Region {
	idx := map[regionKey]int{}
	var out []Region
	for _, p := range m.parts {
		count := func(changes []*changelog.Change) {
			for _, c := range changes {
				k := regionKey{p.name, c.Table}
				j, ok := idx[k]
				if !ok {
					j = len(out)
					idx[k] = j
					out = append(out, Region{Partition: p.name, Table: c.Table})
				}
				out[j].Changes++
				out[j].Bytes += int64(max(c.Size, 0))
			}
		}
		for _, ck := range p.frozen {
			count(ck.changes)
		}
		count(p.active)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Partition != out[j].Partition {
			return out[i].Partition < out[j].Partition
		}
		return out[i].Table.String() < out[j].Table.String()
	})
	return out
}
