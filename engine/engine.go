// Package engine wires a pipeline together: source records are decoded
// (package format), routed to target tables (package route), reduced per
// key (package reduce) and applied, one commit unit per target transaction,
// with the positions reached, to a target the engine knows only through
// package sink (its SQL implementation is package sink/sqlsink).
//
// The engine owns all I/O and time; the core it drives is pure. Its
// guarantees are the pipeline's:
//
//   - Each flush is one target transaction: deletes, upserts, progress,
//     COMMIT. A reader never sees half a flush.
//   - Exactly once: progress is stored in that transaction and read back at
//     start; a record at or before the stored position is never applied
//     again.
//   - Bad input stops the pipeline with an error naming the position, the
//     table, the key and what to do; nothing past the last commit is
//     committed.
//   - Transient target errors (deadlocks, lost connections) are retried
//     with capped exponential backoff; the unit is applied again whole.
//     Meanwhile Status says degraded, with the last error (see
//     Status.Retrying), and once the unit commits the log says the
//     target recovered.
//
// Use it as a library:
//
//	e, err := engine.New(ctx, cfg)
//	...
//	defer e.Close()
//	for _, c := range changes {
//		if err := e.Add(ctx, c); err != nil { ... }
//	}
//	err = e.Flush(ctx)
//
// Run reads the configured source, which the engine knows only through
// package source: it looks source.type up in the registry (source.Lookup),
// hands the driver the source section (config.Source.Settings) and uses
// the optional interfaces the source has. A program that runs a source
// links it in, as database/sql drivers are: import _
// "github.com/txsink/txsink/source/sources" (or one source's package).
// Targets are the same: New opens target.url through package sink's
// registry (sink.Open), so a program links them in with import _
// "github.com/txsink/txsink/sink/sinks", or passes an opened sink.Sink
// (WithTarget).
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/clock"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/internal/fault"
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/route"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/schema/coltype"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/source"
)

// Clock gives the engine the time and its timers: every decision by
// time (the flush interval, transaction mode's switches and commit
// interval, retry backoff) reads it. Tests inject a fake one (package
// clock/clocktest).
type Clock = clock.Clock

// Option changes how New builds an engine.
type Option func(*Engine)

// WithClock overrides the wall clock (clock.Real, the default), for
// deterministic tests. Durations reported for display (CommitInfo.Took,
// Stats.Started) are read from it too.
func WithClock(c Clock) Option { return func(e *Engine) { e.clock = c } }

// WithRandom sets the random source of the retry backoff's jitter (the
// default is seeded at random), so that a test knows the waits. The
// engine draws from src under a lock of its own; nothing else may use src
// meanwhile.
func WithRandom(src rand.Source) Option { return func(e *Engine) { e.random = rand.New(src) } }

// WithLogger sets the logger; the default discards everything.
func WithLogger(l *slog.Logger) Option { return func(e *Engine) { e.log = l } }

// WithTarget makes the engine use an already opened target instead of
// opening cfg.Target.URL. The engine does not close it.
func WithTarget(t sink.Sink) Option { return func(e *Engine) { e.target, e.ownTarget = t, false } }

// WithCatalog makes the engine read the target's catalog (the tables it
// resolves) through q, one connection of the caller's, rather than
// through the target's pool: "txsink check" passes its read-only one, so
// that it resolves the tables entries as a run does on the connection
// every query of its runs on.
func WithCatalog(q sink.Querier) Option { return func(e *Engine) { e.catalog = q } }

// WithBaseDir sets the folder relative sqlite:// paths are resolved
// against (the config file's folder; default the working directory).
func WithBaseDir(dir string) Option { return func(e *Engine) { e.baseDir = dir } }

// WithConfigFile names the pipeline's config file, for the commands that
// messages suggest (txsink reset --config FILE).
func WithConfigFile(path string) Option { return func(e *Engine) { e.configFile = path } }

// Engine applies changes to one target. Add, Flush and Close must be called
// from one goroutine; Stats may be read from any.
type Engine struct {
	cfg   *config.Config
	clock Clock
	// random draws the retry backoff's jitter; randomMu guards it, for
	// units applied by the committer and by Flush.
	random     *rand.Rand
	randomMu   sync.Mutex
	log        *slog.Logger
	target     sink.Sink
	ownTarget  bool
	baseDir    string
	configFile string
	// faults and onCommit are what engine's own tests inject
	// (export_test.go): faults go into the context of every unit's
	// Apply (package fault), onCommit is called after each commit.
	faults   *fault.Hooks
	onCommit func(*commit.Unit)

	checkOnly bool
	// catalog, when set, is what tables are described through (see
	// WithCatalog).
	catalog sink.Querier

	// async, while Run drives a plain-mode pipeline, applies units on a
	// goroutine of its own (see committer); nil otherwise.
	async *committer
	// src is the configured source (see package source), opened by Run;
	// nil, with srcErr saying why, when its type is not registered.
	src    source.Source
	srcErr error
	// feed is the running source while Run runs, else nil.
	feed *feed
	// progress holds the stored position of each partition, as an
	// immutable map replaced whole under progMu: the loop reads it for
	// every record (Applied), the committer writes it once per commit,
	// and a read lock per record cost 2.5% of txsink's CPU on the
	// insert-only bench.
	progress atomic.Pointer[map[string]changelog.Position]
	progMu   sync.Mutex // serializes the writers of progress
	// marks holds the source's marks stored with the positions at start
	// (see commit.Unit.Marks), by partition; read only after New.
	marks map[string]string
	// orders holds, by partition, the places in the source's logs stored
	// with the positions (see copies.go), replaced whole under progMu by
	// each commit; latest is the loop's memory of the places read, and
	// copies counts the copies it dropped since the last foldEvents.
	orders map[string][]changelog.Order
	latest latest
	copies int64
	// appliedAt is the loop's memory of the stored position it looked up
	// last (see applied).
	appliedAt appliedAt
	// refused holds the changes whose rows the target refused, noted for
	// the dead-letter policy (see noteRefused); only Run's goroutine
	// touches it.
	refused map[refusedAt]*reduce.Error

	// tables holds each routed source table's Table (see tableFor).
	tables  reduce.Tables
	unknown map[changelog.Table]bool
	// noted holds the kinds and tables of skipped records already logged
	// (see noteSkipped); guarded by mu.
	noted    map[noteKey]bool
	byTarget map[schema.Name]*reduce.Table
	// evolving holds, by target table, the columns the source added that
	// the table is to get in the unit's own transaction (see
	// addColumns); it outlives a start again of Run, which is what
	// brings the table's planned shape in. Only the loop's goroutine
	// touches it.
	evolving map[schema.Name][]coltype.Column
	// router routes each table's changes once (see tables and unknown).
	router *route.Router
	// narrower is the session's decoder when it can read an update's
	// before image for its key alone (see narrowBefore), else nil.
	narrower format.BeforeNarrower
	buf      *reduce.Buffer
	policy   reduce.Policy
	// keys remembers recent keys' partitions across units (see
	// keyMemory); nil when the source has one partition or the memory is
	// off.
	keys *reduce.KeyPartitions

	hooks []Hook

	// batchAt, while Run's loop takes one batch of records, is the time
	// read once for the whole batch: reading the clock for every change
	// cost 7% of txsink's CPU, and a batch spans microseconds. Zero
	// outside a batch, when now reads the clock.
	batchAt time.Time
	// events counts changes read by kind since they were last folded into
	// stats (see foldEvents): only the loop's goroutine touches it, so
	// counting needs no lock per change.
	events [changelog.Truncate + 1]int64

	// mu guards stats and the status fields below, which Stats and Status
	// read from other goroutines.
	mu      sync.Mutex
	stats   Stats
	state   State
	stopErr error
	parts   map[string]*PartitionStatus
	// slotLags are the readers that know their slot's lag, by partition.
	slotLags   map[string]source.SlotLagger
	lastCommit time.Time
	buffered   int64
	openTxns   int
	// open lists the open source transactions as the transaction loop
	// last published them (see noteOpen).
	open []OpenTxn
	// retry describes the unit being retried, nil while none is (see
	// apply).
	retry *RetryStatus
}

// New opens the target, creates the progress table if needed, reads the
// pipeline's progress, and checks every table entry that names one table:
// its target must exist, and its key must match the target's PRIMARY KEY
// (or it must be declared append-only).
func New(ctx context.Context, cfg *config.Config, opts ...Option) (*Engine, error) {
	e := &Engine{
		cfg:       cfg,
		clock:     clock.Real,
		random:    rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
		log:       slog.New(slog.DiscardHandler),
		ownTarget: true,
		unknown:   map[changelog.Table]bool{},
		byTarget:  map[schema.Name]*reduce.Table{},
		evolving:  map[schema.Name][]coltype.Column{},
		router:    route.New(cfg),
		buf:       reduce.NewBuffer(cfg.Name),
		policy: reduce.Policy{
			MaxRows:  cfg.Sink.FlushMaxRows,
			MaxBytes: cfg.Sink.FlushMaxBytes,
			Interval: cfg.Sink.FlushInterval,
		},
	}
	for _, o := range opts {
		o(e)
	}
	e.src, e.srcErr = openSourceOf(cfg, e.sourceEnv())
	if !e.joinsTopics() {
		// Transactions joined by a transaction topic come in the source's
		// commit order across partitions: a key met in two partitions is
		// then in order, not a contradiction.
		e.keys = e.keyMemory()
		e.buf.ConfinePartitions(e.keys)
	}
	e.stats = Stats{Events: map[changelog.Kind]int64{}, Tables: map[string]TableStats{}, Started: e.clock.Now()}
	e.state = StateStarting
	e.parts = map[string]*PartitionStatus{}
	if e.target == nil {
		open := sink.Open
		if e.checkOnly {
			open = sink.OpenReadOnly
		}
		var t sink.Sink
		try := func(ctx context.Context) (err error) {
			t, err = open(ctx, cfg.Target.URL, e.baseDir)
			return err
		}
		var err error
		if e.checkOnly {
			// txsink check reports an unreachable target at once.
			err = try(ctx)
		} else {
			err = source.Await(ctx, source.Wait{What: "the target database", Timeout: cfg.StartupTimeout, Log: e.log,
				Hint: "check that the server runs and that this host reaches it at that address (host, port, firewall, TLS), or raise startup-timeout"},
				try, errkind.IsTransient)
		}
		if err != nil {
			return nil, err
		}
		e.target = t
	}
	if e.checkOnly {
		return e, nil
	}
	fail := func(err error) (*Engine, error) {
		if e.ownTarget {
			e.target.Close()
		}
		return nil, err
	}
	if err := e.target.Setup(ctx); err != nil {
		return fail(err)
	}
	if err := e.checkTruncates(); err != nil {
		return fail(err)
	}
	if e.deadLettering() {
		if err := e.setupDeadLetters(ctx); err != nil {
			return fail(err)
		}
	}
	if err := e.CheckTables(ctx); err != nil {
		return fail(err)
	}
	p, err := e.target.Progress(ctx, cfg.Name)
	if err != nil {
		return fail(err)
	}
	if err := e.checkStoredPartitions(p); err != nil {
		return fail(err)
	}
	if e.marks, err = e.storedMarks(ctx); err != nil {
		return fail(err)
	}
	e.resetLatest(nil)
	// Claim the partitions this instance reads: an older instance still
	// running with the same pipeline name is fenced from now on, and the
	// positions read with the claim include its last commit.
	if parts := e.partitions(); len(parts) > 0 {
		claimed, err := e.target.Claim(ctx, cfg.Name, parts)
		if err != nil {
			return fail(err)
		}
		for k, v := range claimed {
			p[k] = v
		}
		if busy, err := e.holdLocks(ctx, parts); err != nil {
			return fail(err)
		} else if len(busy) > 0 {
			e.log.Warn("another session holds the lock of partitions this instance claimed (an older instance still running is fenced from now on)", "partitions", busy)
		}
	}
	e.progress.Store(&p)
	for _, pos := range p {
		ps := e.partLocked(pos.Partition)
		ps.Committed, ps.CommittedSeq, ps.Read = pos.Offset, pos.Seq, pos.Offset
	}
	return e, nil
}

// Check validates cfg against its target without writing anything: it
// connects, and resolves every tables entry that names one table (the
// target table exists; its key agrees with the configured key, or the
// table is declared append-only). It returns every problem found.
func Check(ctx context.Context, cfg *config.Config, opts ...Option) error {
	opts = append(opts, func(e *Engine) { e.checkOnly = true })
	e, err := New(ctx, cfg, opts...)
	if err != nil {
		return err
	}
	defer e.Close()
	return errors.Join(e.checkTruncates(), e.CheckTables(ctx))
}

// Target returns the engine's target.
func (e *Engine) Target() sink.Sink { return e.target }

// Add buffers one change, flushing first when a flush trigger has fired.
// A change at or before its partition's stored position is skipped: it was
// applied already. An error stops the pipeline: *reduce.Error for bad input,
// *sink.Error for the target.
func (e *Engine) Add(ctx context.Context, c *changelog.Change) error {
	if e.applied(c.Pos) {
		return nil
	}
	err := e.add(ctx, c)
	e.foldEvents()
	if err != nil {
		return err
	}
	return e.MaybeFlush(ctx)
}

// now is the time of the batch being taken, or the clock's.
func (e *Engine) now() time.Time {
	if !e.batchAt.IsZero() {
		return e.batchAt
	}
	return e.clock.Now()
}

// add buffers c without flushing: the changes of one record must share a
// commit, since they share its position. The caller has checked that c's
// record is not applied yet, and folds the event counts.
func (e *Engine) add(ctx context.Context, c *changelog.Change) error {
	now := e.now()
	if c.Kind == changelog.EndTxn {
		// A boundary names no table and holds no row.
		e.buf.Skip(c.Pos, now)
		return nil
	}
	if e.dropCopy(c) {
		// Consumed, as it was the first time: progress moves past it.
		e.buf.Skip(c.Pos, now)
		return nil
	}
	e.countEvent(c.Kind)
	e.hookChange(c)
	t, err := e.tableFor(ctx, c)
	if err != nil {
		return err
	}
	if t == nil {
		e.mu.Lock()
		e.stats.Skipped++
		e.mu.Unlock()
		e.buf.SkipChange(c, now)
		return nil
	}
	if c.Kind == changelog.Truncate {
		if err := e.truncatable(c, t); err != nil {
			return err
		}
	}
	return e.stale(ctx, t, c, e.buf.Add(t, c, now))
}

// stale returns err, a refusal of a change for table t, unless t was
// altered since it was described: a value its old definition refuses may
// fit the new one (a column widened by the DBA), so the pipeline starts
// again with the new definition (target.ErrShapeChanged) rather than call
// the value bad input. Only refusals of a value or a column ask the
// target; the others are returned as they are.
//
// Under schema.evolve: widen a column c's record declares wider than the
// table's is widened (see widen), and the pipeline starts again too.
//
// Under schema.evolve: add-columns a column of change c the table lacks
// is added, or planned to be added in the unit's transaction (see
// addColumns), and the pipeline starts again the same way.
func (e *Engine) stale(ctx context.Context, t *reduce.Table, c *changelog.Change, err error) error {
	var re *reduce.Error
	if err == nil || !errors.As(err, &re) || re.Column == "" {
		return err
	}
	t = t.Member(re.Table)
	if _, has := t.Schema.Column(re.Column); !has {
		added, aerr := e.addColumns(ctx, t, c)
		if aerr != nil {
			return aerr
		}
		if added {
			return &sink.Error{Op: "convert", Table: t.Schema.String(), Err: fmt.Errorf("%w: columns added (schema.evolve: add-columns)", sink.ErrShapeChanged),
				Hint: "txsink reads the definition again and converts the change anew"}
		}
	}
	changed, cerr := e.shapeChanged(ctx, t.Schema)
	switch {
	case cerr != nil:
		return errors.Join(err, cerr)
	case changed:
		return &sink.Error{Op: "convert", Table: t.Schema.String(), Err: fmt.Errorf("%w: %s", sink.ErrShapeChanged, re.Reason),
			Hint: "txsink reads the definition again and converts the change anew"}
	}
	if werr := e.widen(ctx, t, c, re); werr != nil {
		return werr
	}
	return err
}

// Consumed records that the record at pos held nothing to apply (a
// tombstone, a boundary event), so progress moves past it.
func (e *Engine) Consumed(ctx context.Context, pos changelog.Position) error {
	if e.applied(pos) {
		return nil
	}
	e.buf.Skip(pos, e.now())
	return e.MaybeFlush(ctx)
}

// MaybeFlush flushes when a flush trigger (max-rows, max-bytes, interval)
// has fired.
//
// Under Run with buffer-flush.coalesce, while the target is still
// committing the previous unit, a buffer due by max-rows or by the
// interval is held back and keeps taking changes, reduced per key, until
// the target is free (Run's loop hears of it and calls MaybeFlush again)
// or the buffer is due by max-bytes: the next unit is then as large as the
// time the target took allows, so the target never waits for txsink,
// txsink does not wait idle for the target, and a key changed again
// meanwhile is written once. Measured on txsink bench (insert-only into
// MariaDB), the fixed cost of a unit — nine round trips, the commit —
// was a quarter of the time the target spent on units of 5000 rows.
func (e *Engine) MaybeFlush(ctx context.Context) error {
	p := e.cutPolicy()
	r := e.buf.Due(e.now(), p)
	if r == reduce.NotDue {
		return nil
	}
	if e.coalescing() {
		if p.MaxBytes <= 0 || e.buf.Bytes() < p.MaxBytes {
			return nil
		}
		r = reduce.MaxBytes
	}
	return e.flush(ctx, r.String())
}

// cutPolicy is the policy the buffer is cut by: the configured one,
// except while Run's committer runs. The unit committing and the buffer
// being read are then held at once, so they share max-bytes, the bound on
// what txsink holds (txsink run's memory limit follows it): a flush is
// cut at half of it. Cut at the whole, two flushes took twice the bound,
// and the collector, pressed against the memory limit, took the CPU that
// larger flushes were meant to save.
func (e *Engine) cutPolicy() reduce.Policy {
	p := e.policy
	if e.async != nil {
		p.MaxBytes = max(1, p.MaxBytes/2)
	}
	return p
}

// coalescing reports whether a due buffer is held back now: coalescing is
// on and Run's committer is busy with a unit.
func (e *Engine) coalescing() bool {
	return e.cfg.Sink.FlushCoalesce && e.async != nil && e.async.Busy()
}

// Flush commits everything buffered, as one target transaction.
func (e *Engine) Flush(ctx context.Context) error { return e.flush(ctx, "explicit") }

// NextFlush returns when the interval trigger fires next (zero when the
// buffer is empty or the interval is off).
//
// While the buffer is held back for a busy target (see MaybeFlush) the
// interval waits for the target too, so NextFlush is zero then.
func (e *Engine) NextFlush() time.Time {
	if e.policy.Interval <= 0 || e.buf.Since().IsZero() || e.coalescing() {
		return time.Time{}
	}
	return e.buf.Since().Add(e.policy.Interval)
}

func (e *Engine) flush(ctx context.Context, reason string) error {
	u := e.buf.Take()
	if u == nil {
		if e.async != nil && reason == "explicit" {
			return e.async.Wait()
		}
		return nil
	}
	if e.async != nil {
		if err := e.async.Submit(u, reason); err != nil {
			return err
		}
		if reason == "explicit" {
			// Flush promises everything buffered is committed.
			return e.async.Wait()
		}
		return nil
	}
	return e.commitUnit(ctx, u, reason, 0)
}

// commitUnit applies u (retrying transient errors), then records its
// progress and counts it.
func (e *Engine) commitUnit(ctx context.Context, u *commit.Unit, reason string, txns int) error {
	start := e.clock.Now()
	d, up, in := u.Rows()
	info := CommitInfo{Reason: reason, Changes: u.Changes, Upserted: up, Deleted: d, Inserted: in, Txns: txns, Progress: u.Progress}
	if err := e.markUnit(u); err != nil {
		info.Took, info.Err = e.clock.Now().Sub(start), err
		e.hookCommit(info)
		return err
	}
	if err := e.apply(ctx, u); err != nil {
		info.Took, info.Err = e.clock.Now().Sub(start), err
		e.hookCommit(info)
		return err
	}
	now := e.clock.Now()
	info.Took = now.Sub(start)
	info.GuardRefused, info.DeletesIgnored = u.Refused, u.IgnoredDeletes
	e.setProgress(func(m map[string]changelog.Position) {
		for _, p := range u.Progress {
			m[p.Partition] = p
		}
	})
	e.storeOrders(u)
	e.mu.Lock()
	e.stats.Commits++
	e.stats.Deleted += int64(d)
	e.stats.Upserted += int64(up)
	e.stats.Inserted += int64(in)
	e.stats.Txns += int64(txns)
	e.stats.GuardRefused += int64(u.Refused)
	e.stats.DeletesIgnored += int64(u.IgnoredDeletes)
	for _, b := range u.AllBatches() {
		ts := e.stats.Tables[b.Table.Name]
		ts.Deleted += int64(len(b.Deletes))
		for _, g := range b.Upserts {
			ts.Upserted += int64(len(g.Rows))
		}
		for _, g := range b.Inserts {
			ts.Inserted += int64(len(g.Rows))
		}
		e.stats.Tables[b.Table.Name] = ts
	}
	e.lastCommit = now
	for _, p := range u.Progress {
		ps := e.partLocked(p.Partition)
		ps.Committed, ps.CommittedSeq, ps.LastCommit = p.Offset, p.Seq, now
	}
	e.mu.Unlock()
	e.hookCommit(info)
	if f := e.feed; f != nil && f.committer != nil {
		f.committer.Committed(ctx, u.Progress)
	}
	e.log.Debug("committed", "reason", reason, "changes", u.Changes, "upserts", up, "deletes", d, "inserts", in, "txns", txns, "took", info.Took)
	if e.onCommit != nil {
		e.onCommit(u)
	}
	return nil
}

// markUnit fingerprints the positions of u, when the source gives marks.
func (e *Engine) markUnit(u *commit.Unit) error {
	if u.Marks != nil {
		return nil
	}
	var marker source.Marker
	if f := e.feed; f != nil {
		marker = f.marker
	}
	committed := e.committedOrders()
	if marker == nil && len(u.Orders) == 0 && len(committed) == 0 {
		return nil
	}
	marks := make(map[string]string, len(u.Progress))
	for _, p := range u.Progress {
		var m string
		if marker != nil {
			var err error
			if m, err = marker.Mark(p); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
		// The partition's places in its source's logs go with the
		// source's mark, in the unit's transaction (see copies.go).
		if m = encodeMark(m, mergeOrders(committed[p.Partition], p.Partition, u.Orders)); m != "" {
			marks[p.Partition] = m
		}
	}
	u.Marks = marks
	return nil
}

// Close releases the target (when the engine opened it). It does not
// flush: call Flush first to commit what is buffered.
func (e *Engine) Close() error {
	if e.ownTarget && e.target != nil {
		return e.target.Close()
	}
	return nil
}

// keyMemory returns the memory of recent keys' partitions the pipeline's
// buffers share (sink.key-partitions.remember), or nil when it is off or
// cannot find anything: a file source of one partition (stdin included)
// has every key in that one. A Kafka source, or changes added through the
// library, may have several, however many exist at the start.
func (e *Engine) keyMemory() *reduce.KeyPartitions {
	n := e.cfg.Sink.KeyPartitionsRemember
	if n <= 0 || len(e.partitions()) == 1 {
		return nil
	}
	return reduce.NewKeyPartitions(min(n, reduce.MaxKeyPartitions))
}

// KeyMemoryBytes returns the most memory a run of cfg's source keeps to
// remember recent keys' partitions (sink.key-partitions.remember, see
// reduce.KeyPartitionsBytes): none when the memory is off, when the
// source is files of one partition, or when transactions are joined
// across topics (ordered across partitions, not checked). txsink run's
// memory limit makes room for it, so that the memory does not leave the
// collector less room for the buffer.
func KeyMemoryBytes(cfg *config.Config) int64 {
	n := cfg.Sink.KeyPartitionsRemember
	// A source that lists its partitions up front has several when it
	// lists more than one; one that is assigned them (Kafka) may have
	// several.
	several, joined := false, false
	if src, err := openSourceOf(cfg, source.Env{Log: slog.New(slog.DiscardHandler)}); err == nil {
		l, listed := src.(source.Lister)
		several = !listed || len(l.Partitions()) > 1
		joined = cfg.Sink.TxnEnabled && source.BoundaryPartition(src) != ""
	}
	if !several || n <= 0 || joined {
		return 0
	}
	return reduce.KeyPartitionsBytes(min(n, reduce.MaxKeyPartitions))
}
