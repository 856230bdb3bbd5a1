package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/txsink/txsink/clock"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/formats"
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/source"
)

// Progressor is told how far reading has come; the command line draws a
// progress bar with it. Calls come from the engine loop's goroutine.
type Progressor interface {
	// Read reports that n more bytes of source records were read.
	Read(n int64)
}

// RunOptions tunes Run.
type RunOptions struct {
	// Progress, if set, is told of every record read.
	Progress Progressor
	// Queue is about how many decoded records may wait between the
	// readers and the engine loop (they travel in batches of up to 128).
	// Default 1024. It bounds memory: a full queue makes the readers wait
	// (back-pressure).
	Queue int
}

// Run reads every path of the config's file source (each one partition),
// from the stored progress on, and applies what it reads until every path
// is consumed (or, with follow, until ctx is done). It commits everything
// read before returning. When ctx is cancelled (SIGINT), Run stops reading,
// commits what it has buffered and returns nil: nothing is lost, and the
// next run resumes after that commit.
//
// A target table altered while Run runs (target.ErrShapeChanged) is no
// error: Run starts again from the last commit, describing the tables
// anew, so what was read and not committed is converted for their new
// shape. It gives up after maxShapeRestarts such starts without a commit
// between them.
//
// Under the dead-letter policy a row the target refuses for its own
// values (sink.RefusedRow) is no error either: Run starts again from
// the last commit and quarantines the change that made the row with its
// source transaction (see noteRefused). The loop that joins a transaction
// topic has no dead letters, and stops.
//
// The error Run returns is not logged: its caller reports it (Status and
// the stop hook carry it too).
func (e *Engine) Run(ctx context.Context, opts RunOptions) (err error) {
	// The state stays starting until the source is open (see run): a
	// source waiting for its servers is not ready.
	defer func() {
		if err != nil {
			// Not logged: Run returns it, and its caller reports it
			// (txsink run prints it once, on stderr).
			e.setState(StateFailed, err)
		} else {
			e.setState(StateStopped, nil)
		}
		e.hookStop(err)
	}()
	if opts.Queue <= 0 {
		opts.Queue = 1024
	}
	for restarts := 0; ; {
		commits := e.Stats().Commits
		err = e.run(ctx, opts)
		if err == nil || ctx.Err() != nil {
			return err
		}
		if e.noteRefused(err) {
			// The row's change is quarantined when it is read again.
			if err := e.forgetShapes(ctx); err != nil {
				return err
			}
			continue
		}
		if !errors.Is(err, sink.ErrShapeChanged) {
			return err
		}
		if e.Stats().Commits > commits {
			restarts = 0
		}
		if restarts >= maxShapeRestarts {
			return fmt.Errorf("%w (the target's tables changed %d times without a commit between; stopping)", err, restarts+1)
		}
		restarts++
		e.log.Warn("a target table was altered while txsink ran; starting again from the last commit with its new definition", "err", err)
		if err := e.forgetShapes(ctx); err != nil {
			return err
		}
	}
}

// maxShapeRestarts bounds the starts again of Run for altered tables
// without a commit between them: a table that changes faster than a unit
// commits is not a shape txsink can write.
const maxShapeRestarts = 10

// forgetShapes drops what was read and not committed, and every table's
// description, so that a start again of Run reads from the committed
// positions and describes the tables anew.
func (e *Engine) forgetShapes(ctx context.Context) error {
	e.buf = reduce.NewBuffer(e.cfg.Name)
	e.tables.Clear()
	clear(e.byTarget)
	clear(e.unknown)
	e.appliedAt = appliedAt{}
	marks, err := e.storedMarks(ctx)
	if err != nil {
		return err
	}
	e.marks = marks
	return nil
}

// run is one start of Run: it opens the source at the committed positions
// and applies what it reads until the end, a signal or an error.
func (e *Engine) run(ctx context.Context, opts RunOptions) (err error) {
	// Reading starts again from the committed positions: what was read
	// and not committed is no copy when it comes again.
	e.resetLatest(nil)
	s, err := e.openSession(ctx, opts)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			// Stopped while the source was opening (connecting to a
			// database): nothing was read, so nothing is lost.
			return nil
		}
		return err
	}
	defer s.close()
	e.setState(StateRunning, nil)
	// Commit on a goroutine of its own while the loop builds the next
	// unit; every unit is still one transaction, in order. The committer
	// is closed first: the unit in flight reads the feed (its marks, its
	// offsets committed back to the source).
	e.async = newCommitter(s.applyCtx, e)
	defer func() {
		if cerr := e.async.Close(); err == nil && cerr != nil {
			err = cerr
		}
		e.async = nil
	}()
	if s.l, err = e.newLoop(); err != nil {
		return err
	}
	return s.serve(ctx)
}

// session is one start of Run: the feed of the source's records, the
// decode pool, the mode's loop, and the one timer of the select that
// drives them. All of it is Run's goroutine's.
type session struct {
	e    *Engine
	opts RunOptions
	// applyCtx is what commits run on: the caller's cancellation does
	// not reach it, so a signal stops the reading and lets the commit in
	// flight finish. stopReading stops the readers.
	applyCtx    context.Context
	stopReading context.CancelFunc
	// out carries the decoded records from the readers, in batches (see
	// batchMax): one channel operation per record cost a tenth of
	// txsink's CPU.
	out  chan []decoded
	pool *decodePool
	feed *feed
	// pending counts the readers that have not returned yet.
	pending int
	l       loop
	timer   loopTimer
	// endOfInput is set once every reader has returned, for shutdown.
	endOfInput bool
}

// openSession opens the decoder, the decode pool and the source's feed,
// at the committed positions, and makes the feed the engine's.
func (e *Engine) openSession(ctx context.Context, opts RunOptions) (*session, error) {
	dec, err := formats.New(e.cfg.Source.Format, format.Options(e.cfg.Source.FormatOptions))
	if err != nil {
		return nil, fmt.Errorf("source.format: %w", err)
	}
	e.narrowKnown(ctx, dec)
	e.readOrders(dec)
	readCtx, stopReading := context.WithCancel(ctx)
	out := make(chan []decoded, max(1, opts.Queue/batchMax))
	pool := newDecodePool(dec, decodeWorkers(), e.arenas())
	f, err := e.openFeed(readCtx, pool, out)
	if err != nil {
		pool.close()
		stopReading()
		return nil, err
	}
	e.feed = f
	return &session{e: e, opts: opts, applyCtx: context.WithoutCancel(ctx), stopReading: stopReading,
		out: out, pool: pool, feed: f, pending: f.readers}, nil
}

// arenas says when the decoded changes' arenas may be used again: the
// plain loop copies what it keeps of a change before the next batch, and
// the transaction loop recycles an arena once the plans holding its
// changes are committed; the joiner of a transaction topic keeps changes
// as decoded.
func (e *Engine) arenas() int {
	switch {
	case e.joinsTopics():
		return noArenas
	case e.cfg.Sink.TxnEnabled:
		return heldArenas
	}
	return batchArenas
}

// joinsTopics reports whether transactions are joined across the
// source's partitions by boundaries of their own (a Debezium transaction
// topic, see source.Boundaries and joinLoop) rather than read in each
// partition.
func (e *Engine) joinsTopics() bool {
	return e.cfg.Sink.TxnEnabled && source.BoundaryPartition(e.src) != ""
}

// newLoop returns the loop of the configured mode.
func (e *Engine) newLoop() (loop, error) {
	switch {
	case e.joinsTopics():
		jl, err := e.newJoinLoop()
		if err != nil {
			return nil, err
		}
		return jl, nil
	case e.cfg.Sink.TxnEnabled:
		tl, err := e.newTxnLoop()
		if err != nil {
			return nil, err
		}
		return tl, nil
	}
	return &plainLoop{e: e}, nil
}

// close stops the readers, waits until each has returned, draining out so
// that none blocks on a send, and closes the pool and the source.
func (s *session) close() {
	s.e.feed = nil
	s.stopReading()
	close(s.feed.loopDone)
	for s.pending > 0 {
		select {
		case <-s.feed.done:
			s.pending--
		case <-s.out:
		}
	}
	// The readers were the pool's only clients.
	s.pool.close()
	s.feed.close(s.e)
}

// serve is Run's select: it hands the loop each batch of records, its
// ticks (its deadline passed, or a unit committed), and the source's
// changes of ownership (in the records' channel), until every reader has
// returned, the caller's context is done, or something fails; then it
// shuts down.
func (s *session) serve(ctx context.Context) error {
	e := s.e
	failed, wake := e.async.Failed(), s.l.wake()
	for s.pending > 0 {
		select {
		case <-failed:
			return s.shutdown(e.async.failed())
		case <-ctx.Done():
			return s.shutdown(nil)
		case err := <-s.feed.done:
			s.pending--
			if err != nil && !errors.Is(err, context.Canceled) {
				return s.shutdown(err)
			}
		case ds := <-s.out:
			if err := s.takeBatch(ds); err != nil {
				return s.shutdown(err)
			}
		case <-s.timer.c:
			if err := s.l.tick(s.applyCtx); err != nil {
				return s.shutdown(err)
			}
		case <-wake:
			// A unit committed: the tick lets the next one go.
			if err := s.l.tick(s.applyCtx); err != nil {
				return s.shutdown(err)
			}
		}
		s.timer.reset(e.clock, s.l)
	}
	// Every reader is done; take what they queued.
	for len(s.out) > 0 {
		if err := s.takeBatch(<-s.out); err != nil {
			return s.shutdown(err)
		}
	}
	s.endOfInput = ctx.Err() == nil
	return s.shutdown(nil)
}

// shutdown stops the reading and commits what can be committed, with a
// context of its own, so a signal lets the commit in flight finish:
// after runErr, what the loop held back for a busy target (see
// loop.heldBack); at the end of input or on a signal, everything the loop
// can commit (loop.finish).
func (s *session) shutdown(runErr error) error {
	s.stopReading()
	fctx, cancel := context.WithTimeout(s.applyCtx, time.Minute)
	defer cancel()
	if runErr != nil {
		// The buffer holds whole records, all read before whatever
		// stopped the pipeline.
		if err := s.l.heldBack(fctx); err != nil {
			return errors.Join(runErr, err)
		}
		return runErr
	}
	s.e.setState(StateStopping, nil)
	if err := s.l.finish(fctx); err != nil {
		return err
	}
	s.e.noteUnfinished(s.endOfInput)
	return nil
}

// takeBatch takes one batch of records at one reading of the clock, and
// publishes what it read and buffered once.
func (s *session) takeBatch(ds []decoded) error {
	e := s.e
	s.account(ds)
	e.batchAt = e.clock.Now()
	defer func() {
		e.batchAt = time.Time{}
		e.foldEvents()
		s.l.note()
	}()
	for i := range ds {
		if err := s.take(&ds[i]); err != nil {
			return err
		}
	}
	// The plain loop is done with the batch's arenas; the transaction
	// loop holds them (txnLoop.record).
	releaseBatch(ds, s.pool.recycle && !s.pool.held)
	return nil
}

// take hands one record, or change of ownership, to the loop.
func (s *session) take(d *decoded) error {
	if d.ctl != nil {
		return s.e.control(s.applyCtx, s.l, d.ctl)
	}
	if s.feed.owned != nil && !s.feed.owned[d.pos.Partition] && !d.fatal {
		// A record of a partition revoked after it was read: its new
		// owner reads it from the stored progress.
		return nil
	}
	if d.err != nil && (d.fatal || !s.e.quarantinesUndecodable()) {
		return d.err
	}
	// A schema change or a logical decoding message is counted, and
	// reaches the loop as a record with nothing to apply.
	s.e.skipNotes(d)
	return s.l.record(s.applyCtx, d)
}

// account records what a batch read, under one lock: the bytes, and each
// partition's read position and end.
func (s *session) account(ds []decoded) {
	e, f := s.e, s.feed
	var n int64
	e.mu.Lock()
	for i := 0; i < len(ds); {
		d := &ds[i]
		if d.ctl != nil || d.pos.Partition == "" || (f.owned != nil && !f.owned[d.pos.Partition]) {
			i++
			continue
		}
		// A batch holds runs of one partition's records in read order:
		// the partition is looked up once per run, and its end taken
		// from the run's last record that knows it.
		ps := e.partLocked(d.pos.Partition)
		read, j, size := d.pos.Offset, i, int64(0)
		for ; j < len(ds) && ds[j].ctl == nil && ds[j].pos.Partition == ps.Name; j++ {
			size += int64(ds[j].size)
			read = max(read, ds[j].pos.Offset)
		}
		if ps.Unit == "bytes" {
			// A record's size leaves out its line terminator (and blank
			// lines between records): the position moved by what was
			// read, so the bytes read end at the file's size.
			size = max(read-ps.Read, 0)
		}
		n += size
		end := int64(-1)
		for k := j - 1; k >= i && end < 0; k-- {
			end = f.size(ds[k])
		}
		noteReadOf(ps, read, end)
		i = j
	}
	e.stats.Bytes += n
	e.mu.Unlock()
	if s.opts.Progress != nil && n > 0 {
		s.opts.Progress.Read(n)
	}
}

// loopTimer is the one timer of Run's select, set after each event to
// the loop's next deadline; c is nil while the loop has none.
type loopTimer struct {
	t clock.Timer
	c <-chan time.Time
}

// reset sets the timer to l's deadline.
func (t *loopTimer) reset(c Clock, l loop) {
	next, ok := l.deadline()
	if !ok {
		t.c = nil
		return
	}
	d := max(next.Sub(c.Now()), 0)
	if t.t == nil {
		t.t = c.NewTimer(d)
	} else {
		t.t.Reset(d)
	}
	t.c = t.t.C()
}

// loop is what Run feeds decoded records to: the per-key flush buffer, or
// in transaction mode the transaction machine. All calls come from Run's
// goroutine.
type loop interface {
	// record takes one decoded record, committing what has become due.
	record(ctx context.Context, d *decoded) error
	// tick does the time-based work that is due.
	tick(ctx context.Context) error
	// deadline is when tick has work next (ok false: no timer needed).
	deadline() (time.Time, bool)
	// finish commits what can be committed at the end of input or on
	// shutdown.
	finish(ctx context.Context) error
	// note publishes what the loop buffers, for Status.
	note()
	// wake gets a value when the loop has work because the committer is
	// done with a unit: a buffer held back for it, or the next plan.
	wake() <-chan struct{}
	// heldBack commits, after an error stopped the pipeline, what the
	// loop held back for a busy target and would have committed without
	// the wait (see Engine.MaybeFlush).
	heldBack(ctx context.Context) error
	// assigned refuses newly assigned partitions the loop cannot take.
	assigned(parts []string) error
	// revoked drops what the loop holds of partitions given up (owned
	// lists the partitions owned before), to be read again by their new
	// owner, and says how much it dropped, in what unit.
	revoked(parts []string, owned map[string]bool) (dropped int, unit string, err error)
}
