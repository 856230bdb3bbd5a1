package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/source"
)

// feed is a running source: the goroutines that read and decode records
// into Run's channel, and what Run needs to know of them.
type feed struct {
	src source.Source
	// readers goroutines were started; each sends one value on done when
	// it returns.
	readers int
	done    chan error
	// loopDone is closed when Run's loop stops taking records, so that a
	// rebalance callback waiting for the loop gives up.
	loopDone chan struct{}
	// sizes holds the readers that know their partition's end (for lag),
	// by partition; read-only once the readers run.
	sizes map[string]source.Sizer
	// lanes lists the partitions of the readers of one partition.
	lanes []string
	// owned, when not nil, holds the partitions this instance owns now
	// (a source.Rebalancer); records of other partitions are dropped.
	// Only Run's goroutine touches it.
	owned map[string]bool
	// committer, when set, is told of the positions of every commit,
	// from the goroutine that committed.
	committer source.Committer
	// marker, when set, fingerprints a position for its progress row (see
	// commit.Unit.Marks). It is called from the goroutine that commits, in
	// the order of the positions.
	marker source.Marker
}

// size returns the end of d's partition (for lag), or -1.
func (f *feed) size(d decoded) int64 {
	if s := f.sizes[d.pos.Partition]; s != nil {
		return s.Size()
	}
	return d.end
}

// close releases the source once every reader has returned. A Committer
// is first told of the last commits' positions, synchronously, so that
// lag tools see where this instance stopped.
func (f *feed) close(e *Engine) {
	if f.committer != nil {
		parts := f.lanes
		if f.owned != nil {
			parts = slices.Collect(maps.Keys(f.owned))
		}
		var last []changelog.Position
		for _, part := range parts {
			if pos, ok := e.Progress(part); ok && pos.Offset > 0 {
				last = append(last, pos)
			}
		}
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		f.committer.Stopping(cctx, last)
		cancel()
	}
	f.src.Close()
}

// sourceEnv is what the engine's source gets besides its settings.
func (e *Engine) sourceEnv() source.Env {
	log := e.log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return source.Env{Pipeline: e.cfg.Name, BaseDir: e.baseDir, Log: log, ResetHint: e.resetCommand, StartupTimeout: e.cfg.StartupTimeout}
}

// openSourceOf returns the source of cfg's source.type from the registry
// (see package source), configured by cfg's source section; nothing is
// read yet.
func openSourceOf(cfg *config.Config, env source.Env) (source.Source, error) {
	d, err := source.Lookup(cfg.Source.Type)
	if err != nil {
		return nil, err
	}
	return d.Open(source.Settings(cfg.Source.Settings()), env)
}

// CheckSources opens every partition of cfg's source as Run does, at the
// position stored for it (stored: the pipeline's progress rows, as
// sink.ProgressKeeper.Stored returns them), verified against its mark, and closes it
// again, when the source can (a source.Checker). It returns, joined, a
// *SourceError for each refusal Run would start with: for files, the same
// file listed twice, a partition's file missing, replaced or truncated
// under its stored position. Streams (standard input, a FIFO) are left
// alone: opening them would consume them. It writes nothing.
func CheckSources(ctx context.Context, cfg *config.Config, stored []sink.Stored, opts ...Option) error {
	e := &Engine{cfg: cfg}
	for _, o := range opts {
		o(e)
	}
	src, err := openSourceOf(cfg, e.sourceEnv())
	if err != nil {
		return nil // reported by config validation, or by Run
	}
	ch, ok := src.(source.Checker)
	if !ok {
		return nil
	}
	at := make(map[string]source.Stored, len(stored))
	for _, s := range stored {
		mark, _ := decodeMark(s.Mark)
		at[s.Partition] = source.Stored{Position: s.Position, Mark: mark}
	}
	err = ch.Check(ctx, at)
	if err == nil || ctx.Err() != nil {
		return err
	}
	asSourceError := func(err error) error {
		se := &SourceError{Err: err}
		var pe *source.PartitionError
		if errors.As(err, &pe) {
			se.Partition, se.Err = pe.Partition, pe.Err
		}
		return se
	}
	j, joined := err.(interface{ Unwrap() []error })
	if !joined {
		return asSourceError(err)
	}
	var errs []error
	for _, err := range j.Unwrap() {
		errs = append(errs, asSourceError(err))
	}
	return errors.Join(errs...)
}

// SourceError is a source Run refuses to start with (see CheckSources).
type SourceError struct {
	// Partition is the partition refused; "" when the refusal is about
	// the partitions together (a file listed twice).
	Partition string
	Err       error
}

// Error returns Err's message, which names the partition.
func (e *SourceError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *SourceError) Unwrap() error { return e.Err }

// Kind reports errkind.Permanent: Run refuses to start with it.
func (e *SourceError) Kind() errkind.Kind { return errkind.Permanent }

// Where names the partition ("" for the partitions together).
func (e *SourceError) Where() errkind.Where {
	return errkind.Where{Pos: changelog.Position{Partition: e.Partition}}
}

// resetCommand is the command that forgets partition's progress, for
// messages that suggest it.
func (e *Engine) resetCommand(partition string) string {
	cfg := "FILE"
	if e.configFile != "" {
		cfg = shellQuote(e.configFile)
	}
	return "txsink reset --config " + cfg + " --partition " + shellQuote(partition)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=+@%,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// openFeed opens the source at the stored progress and starts a goroutine
// per Reader that reads and decodes through pool into out.
func (e *Engine) openFeed(ctx context.Context, pool *decodePool, out chan<- []decoded) (*feed, error) {
	if e.src == nil {
		return nil, e.srcErr
	}
	f := &feed{src: e.src, loopDone: make(chan struct{}), sizes: map[string]source.Sizer{}}
	if rb, ok := e.src.(source.Rebalancer); ok {
		f.owned = map[string]bool{}
		rb.Rebalance(&feedGroup{out: out, loopDone: f.loopDone})
	}
	f.committer, _ = e.src.(source.Committer)
	f.marker, _ = e.src.(source.Marker)
	readers, err := e.src.Open(ctx, source.Start{Stored: e.storedAt, Rewind: e.rewind})
	if err != nil {
		return nil, err
	}
	for _, r := range readers {
		l, ok := r.(source.Lane)
		if !ok {
			continue
		}
		part, size := l.Partition(), int64(-1)
		if s, ok := r.(source.Sizer); ok {
			f.sizes[part] = s
			size = s.Size()
		}
		if sl, ok := r.(source.SlotLagger); ok {
			e.mu.Lock()
			if e.slotLags == nil {
				e.slotLags = map[string]source.SlotLagger{}
			}
			e.slotLags[part] = sl
			e.mu.Unlock()
		}
		f.lanes = append(f.lanes, part)
		e.noteRead(part, l.Start().Offset, size)
	}
	keepGoing := e.deadLettering() && !e.cfg.Sink.TxnEnabled
	f.done = make(chan error, len(readers))
	f.readers = len(readers)
	for _, r := range readers {
		// Each reader decodes on its own goroutine; the engine loop stays
		// the only writer of the buffer.
		if b, ok := r.(source.BatchReader); ok {
			go func() { f.done <- readBatches(ctx, b, pool, out, keepGoing) }()
		} else {
			go func() { f.done <- readPartition(ctx, r, pool, out, keepGoing) }()
		}
	}
	return f, nil
}

// storedAt is a partition's stored progress, for the source's Open.
func (e *Engine) storedAt(part string) (source.Stored, bool) {
	pos, ok := e.Progress(part)
	return source.Stored{Position: pos, Mark: e.marks[part]}, ok
}

// control is a change of the partitions this instance owns, sent by the
// Kafka consumer's group callbacks to Run's loop.
type control struct {
	assign []string // newly assigned partitions
	revoke []string // partitions given up in an orderly rebalance
	lost   []string // partitions lost without warning
	reply  chan controlReply
}

type controlReply struct {
	offsets map[string]int64 // assign: where each partition with progress resumes
	err     error
}

// errLoopStopped answers a group callback after Run's loop has stopped.
var errLoopStopped = errors.New("the pipeline is stopping")

// control handles a change of ownership in Run's loop, in order with the
// records: every record read before it has been taken.
func (e *Engine) control(ctx context.Context, l loop, c *control) error {
	var r controlReply
	var err error
	switch {
	case len(c.assign) > 0:
		r.offsets, r.err = e.assign(ctx, l, c.assign)
		err = r.err
	case len(c.revoke) > 0:
		err = e.revoke(ctx, l, c.revoke)
	case len(c.lost) > 0:
		err = fmt.Errorf("kafka partitions %v were lost from the consumer group (this instance missed its session timeout, or was fenced); "+
			"stopping with nothing past the last commit applied: a restart resumes from the target's progress", c.lost)
	}
	c.reply <- r
	return err
}

// assign claims newly assigned partitions in the target (fencing any
// earlier owner still running) and returns where each resumes.
func (e *Engine) assign(ctx context.Context, l loop, parts []string) (map[string]int64, error) {
	if e.async != nil {
		// Claim updates the target's fencing epochs, which the committer
		// reads: let it finish first.
		if err := e.async.Wait(); err != nil {
			return nil, err
		}
	}
	if err := l.assigned(parts); err != nil {
		return nil, err
	}
	claimed, err := e.target.Claim(ctx, e.cfg.Name, parts)
	if err != nil {
		return nil, err
	}
	if busy, err := e.holdLocks(ctx, parts); err != nil {
		return nil, err
	} else if len(busy) > 0 {
		e.log.Info("the partitions' previous owner still holds their locks; it is fenced from now on", "partitions", busy)
	}
	offsets := make(map[string]int64, len(parts))
	for part, pos := range claimed {
		if pos.Offset > 0 {
			// Offsets start at 0 and a stored position is one past the
			// last record applied, so 0 means nothing was applied yet.
			offsets[part] = pos.Offset
		}
	}
	e.setProgress(func(m map[string]changelog.Position) { maps.Copy(m, claimed) })
	e.resetLatest(parts)
	e.mu.Lock()
	for part, pos := range claimed {
		ps := e.partLocked(part)
		ps.Committed, ps.CommittedSeq, ps.Read, ps.End = pos.Offset, pos.Seq, pos.Offset, -1
	}
	e.mu.Unlock()
	for _, part := range parts {
		e.feed.owned[part] = true
	}
	e.log.Info("partitions assigned", "partitions", parts)
	return offsets, nil
}

// revoke commits everything committable (in transaction mode the finished
// source transactions) and forgets the partitions, dropping what of them
// is left: their new owner resumes from the progress just committed.
func (e *Engine) revoke(ctx context.Context, l loop, parts []string) error {
	ctx, cancel := context.WithTimeout(ctx, revokeDeadline)
	defer cancel()
	if err := l.finish(ctx); err != nil {
		return fmt.Errorf("committing before giving up partitions %v: %w", parts, err)
	}
	// What was read and not committed, to be read again by the new owner:
	// changes of unfinished transactions, or (joined) whole transactions.
	dropped, unit, err := l.revoked(parts, e.feed.owned)
	if err != nil {
		return err
	}
	e.mu.Lock()
	for _, p := range parts {
		delete(e.feed.owned, p)
		delete(e.parts, p)
		e.buf.Forget(p)
	}
	e.mu.Unlock()
	if err := e.releaseLocks(ctx, parts); err != nil {
		e.log.Warn("giving up the locks of revoked partitions", "partitions", parts, "err", err)
	}
	e.log.Info("partitions revoked", "partitions", parts, "dropped", dropped, "dropped_unit", unit)
	return nil
}

// revokeDeadline bounds the commit a revocation waits for: the rebalance
// waits for it, and Kafka's default rebalance timeout is one minute.
const revokeDeadline = 50 * time.Second

// readBatches reads a BatchReader and decodes (through the pool) until
// ctx is done or the source fails, handing every batch's records on before
// it lets a rebalance proceed, so that ownership changes reach Run's loop
// in order with the records.
func readBatches(ctx context.Context, r source.BatchReader, pool *decodePool, out chan<- []decoded, keepGoing bool) error {
	// Batch records own their bytes: the jobs take them as they are.
	s := newDecodeStream(pool, out, true, keepGoing, false) // a stream of every partition
	for {
		b, err := r.NextBatch(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.send(ctx, decoded{err: err, fatal: true})
			return nil
		}
		for _, rec := range b.Records {
			s.addOwned(rec.Data, rec.Key, rec.Pos, b.Ends[rec.Pos.Partition])
			if s.full() && !s.submit(ctx) {
				r.Release()
				return s.stop(ctx)
			}
		}
		// Everything read is handed on before a rebalance may run.
		if !s.drain(ctx) {
			r.Release()
			return s.stop(ctx)
		}
		r.Release()
	}
}

// feedGroup hands a Rebalancer's group changes to Run's loop.
type feedGroup struct {
	out      chan<- []decoded
	loopDone <-chan struct{}
}

func (g *feedGroup) send(ctx context.Context, c *control) controlReply {
	c.reply = make(chan controlReply, 1)
	select {
	case g.out <- []decoded{{ctl: c}}:
	case <-g.loopDone:
		return controlReply{err: errLoopStopped}
	case <-ctx.Done():
		return controlReply{err: ctx.Err()}
	}
	select {
	case r := <-c.reply:
		return r
	case <-g.loopDone:
		return controlReply{err: errLoopStopped}
	}
}

// Assigned implements source.Group.
func (g *feedGroup) Assigned(ctx context.Context, parts []string) (map[string]int64, error) {
	r := g.send(ctx, &control{assign: slices.Clone(parts)})
	return r.offsets, r.err
}

// Revoked implements source.Group.
func (g *feedGroup) Revoked(ctx context.Context, parts []string) {
	g.send(ctx, &control{revoke: slices.Clone(parts)})
}

// Lost implements source.Group.
func (g *feedGroup) Lost(ctx context.Context, parts []string) {
	g.send(ctx, &control{lost: slices.Clone(parts)})
}

// batchMax is the most records one message from a reader to Run's loop
// carries.
const batchMax = 128

// lender is a Reader that lends its records' bytes in batches: they stay
// valid while the lease returned with them is retained (see
// file.Reader.NextLentBatch).
type lender interface {
	// NextLentBatch appends up to max records to recs and returns them
	// with their lease, which holds a reference for the caller.
	NextLentBatch(ctx context.Context, recs []source.Record, max int) ([]source.Record, lease, error)
}

// readPartition reads a Reader until its end and decodes it through the
// pool, sending its records to out in order, in batches. Records held for
// decoding are sent on before a read that may wait (a followed file at its
// end, a pipe; any read of a Reader that does not say, see source.Waiter):
// the next read may wait, and records must not wait with it.
//
// After a record that cannot be decoded it stops, unless keepGoing (the
// dead-letter policy, which quarantines the record and reads on).
func readPartition(ctx context.Context, r source.Reader, pool *decodePool, out chan<- []decoded, keepGoing bool) error {
	// Decoded changes never point into the record (format.Decoder's
	// contract), so the record is borrowed from the reader's buffer and
	// copied into its job, which the dead-letter policy keeps as read;
	// or, from a reader that lends its records (a file's), left in the
	// reader's block, which the job holds until it is decoded. The
	// dead-letter policy keeps records past that, and copies them: a
	// record kept would hold its whole block.
	s := newDecodeStream(pool, out, keepGoing, keepGoing, true)
	next := r.Next
	if b, ok := r.(source.Borrower); ok {
		next = b.NextBorrowed
	}
	lend, _ := r.(lender)
	if keepGoing {
		lend = nil
	}
	var lent []source.Record // a batch of lend's
	mayWait := func() bool { return true }
	if w, ok := r.(source.Waiter); ok {
		mayWait = w.MayWait
	}
	part := ""
	if l, ok := r.(source.Lane); ok {
		part = l.Partition()
	}
	for {
		if mayWait() && !s.drain(ctx) {
			return s.stop(ctx)
		}
		if lend != nil {
			var l lease
			var err error
			if lent, l, err = lend.NextLentBatch(ctx, lent[:0], jobRecords); err == nil {
				if !s.addLent(ctx, lent, l, part) {
					return s.stop(ctx)
				}
				clear(lent) // the records' bytes are the jobs' now
				continue
			}
			return endOfRead(ctx, s, err, part)
		}
		rec, err := next(ctx)
		if err != nil {
			return endOfRead(ctx, s, err, part)
		}
		if part != "" {
			rec.Pos.Partition = part
		}
		s.addBorrowed(rec.Data, rec.Pos, -1)
		if s.full() && !s.submit(ctx) {
			return s.stop(ctx)
		}
	}
}

// endOfRead is what readPartition returns once a read of its partition
// part failed with err: at io.EOF, nil once every record is handed on;
// otherwise the error goes behind the records already read, so they are
// applied before the pipeline stops.
func endOfRead(ctx context.Context, s *decodeStream, err error, part string) error {
	if errors.Is(err, io.EOF) {
		if !s.drain(ctx) {
			return s.stop(ctx)
		}
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !s.send(ctx, decoded{pos: changelog.Position{Partition: part}, err: err, fatal: true}) {
		return s.stop(ctx)
	}
	return nil
}
