package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/clock"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/formats"
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/sink/sqlsink"
	"github.com/txsink/txsink/source"
)

// decoded is one source record, decoded, on its way to the engine loop.
type decoded struct {
	pos     changelog.Position
	size    int
	raw     []byte // the record as read, for the dead-letter table
	changes []changelog.Change
	// mem, on the last record of a decoded job, is the arena the job's
	// changes are in, for the loop to recycle once it took them.
	mem *changelog.Arena
	err error
	// fatal marks an error of the source itself (not of one record's
	// content), which stops the pipeline under any bad-input policy.
	fatal bool
	// inArena says the changes are in their job's arena (mem, on the
	// job's last record), not on the heap: the arena's Bytes tell their
	// memory.
	inArena bool
	// ctl, when set, is no record but a change of the partitions this
	// instance owns (a Kafka rebalance). It travels in the records'
	// channel so that it is handled after every record read before it.
	ctl *control
	// end is the partition's end (file size, Kafka high watermark) when
	// the reader knows it, else -1.
	end int64
}

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
// values (sqlsink.RefusedRow) is no error either: Run starts again from
// the last commit and quarantines the change that made the row with its
// source transaction (see noteRefused). The loop that joins a transaction
// topic has no dead letters, and stops.
func (e *Engine) Run(ctx context.Context, opts RunOptions) (err error) {
	e.setState(StateRunning, nil)
	defer func() {
		if err != nil {
			e.setState(StateFailed, err)
			e.log.Error("pipeline stopped", "err", err)
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
		if !errors.Is(err, sqlsink.ErrShapeChanged) {
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
	clear(e.tables)
	clear(e.byTarget)
	clear(e.unknown)
	e.appliedAt = appliedAt{}
	marks, err := e.target.Marks(ctx, e.cfg.Name)
	if err != nil {
		return err
	}
	e.marks = marks
	return nil
}

// run is one start of Run: it opens the source at the committed positions
// and applies what it reads until the end, a signal or an error.
func (e *Engine) run(ctx context.Context, opts RunOptions) (err error) {
	dec, err := formats.New(e.cfg.Source.Format, format.Options(e.cfg.Source.FormatOptions))
	if err != nil {
		return fmt.Errorf("source.format: %w", err)
	}
	// Commits run on a context the caller's cancellation does not reach:
	// a signal stops the reading, and lets the commit in flight finish.
	applyCtx := context.WithoutCancel(ctx)
	readCtx, stopReading := context.WithCancel(ctx)
	defer stopReading()

	// Records travel in batches (see batchMax): one channel operation per
	// record cost a tenth of txsink's CPU.
	out := make(chan []decoded, max(1, opts.Queue/batchMax))
	// The plain loop copies what it keeps of a change before the next
	// batch, and the transaction loop recycles an arena once the plans
	// holding its changes are committed; the joiner of a transaction
	// topic keeps changes as decoded.
	joined := e.cfg.Sink.TxnEnabled && e.cfg.Source.TransactionTopic != ""
	arenas := batchArenas
	switch {
	case joined:
		arenas = noArenas
	case e.cfg.Sink.TxnEnabled:
		arenas = heldArenas
	}
	pool := newDecodePool(dec, decodeWorkers(), arenas)
	src, err := e.openFeed(readCtx, pool, out)
	if err != nil {
		pool.close()
		return err
	}
	pending := src.readers
	defer func() {
		// Readers stop on readCtx; wait until each has returned before
		// closing the source, and drain out so none blocks on a send.
		stopReading()
		close(src.loopDone)
		for pending > 0 {
			select {
			case <-src.done:
				pending--
			case <-out:
			}
		}
		// The readers were the pool's only clients.
		pool.close()
		src.close(e)
	}()
	done := src.done

	e.feed = src
	defer func() { e.feed = nil }()
	var l loop = &plainLoop{e: e}
	{
		// Commit on a goroutine of its own while the loop builds the
		// next unit; every unit is still one transaction, in order.
		e.async = newCommitter(applyCtx, e)
		// The unit committing and the buffer being read are held at
		// once, so they share max-bytes, the bound on what txsink holds
		// (txsink run's memory limit follows it): a flush is cut at half
		// of it. Cut at the whole, two flushes took twice the bound, and
		// the collector, pressed against the memory limit, took the CPU
		// that larger flushes were meant to save.
		policy := e.policy
		e.policy.MaxBytes = max(1, policy.MaxBytes/2)
		defer func() {
			if cerr := e.async.Close(); err == nil && cerr != nil {
				err = cerr
			}
			e.async = nil
			e.policy = policy
		}()
	}
	if joined {
		jl, err := e.newJoinLoop()
		if err != nil {
			return err
		}
		l = jl
	} else if e.cfg.Sink.TxnEnabled {
		tl, err := e.newTxnLoop()
		if err != nil {
			return err
		}
		l = tl
	}

	var timer clock.Timer
	var timerC <-chan time.Time
	resetTimer := func() {
		next, ok := l.deadline()
		if !ok {
			timerC = nil
			return
		}
		d := max(next.Sub(e.clock.Now()), 0)
		if timer == nil {
			timer = e.clock.NewTimer(d)
		} else {
			timer.Reset(d)
		}
		timerC = timer.C()
	}
	// endOfInput is set once every reader has returned, for shutdown.
	endOfInput := false
	// shutdown commits what can be committed with a context of its own,
	// so a signal lets the commit in flight finish.
	shutdown := func(runErr error) error {
		stopReading()
		if runErr != nil {
			if h, ok := l.(interface{ heldBack(context.Context) error }); ok {
				// The buffer holds whole records, all read before
				// whatever stopped the pipeline.
				fctx, cancel := context.WithTimeout(applyCtx, time.Minute)
				defer cancel()
				if err := h.heldBack(fctx); err != nil {
					return errors.Join(runErr, err)
				}
			}
			return runErr
		}
		e.setState(StateStopping, nil)
		fctx, cancel := context.WithTimeout(applyCtx, time.Minute)
		defer cancel()
		if err := l.finish(fctx); err != nil {
			return err
		}
		e.noteUnfinished(endOfInput)
		return nil
	}
	take := func(d *decoded) error {
		if d.ctl != nil {
			return e.control(applyCtx, l, d.ctl)
		}
		if src.owned != nil && !src.owned[d.pos.Partition] && !d.fatal {
			// A record of a partition revoked after it was read: its
			// new owner reads it from the stored progress.
			return nil
		}
		if d.err != nil && (d.fatal || !e.quarantinesUndecodable()) {
			return d.err
		}
		return l.record(applyCtx, d)
	}
	// account records what a batch read, under one lock: the bytes, and
	// each partition's read position and end.
	account := func(ds []decoded) {
		var n int64
		e.mu.Lock()
		for i := 0; i < len(ds); {
			d := &ds[i]
			if d.ctl != nil || d.pos.Partition == "" || (src.owned != nil && !src.owned[d.pos.Partition]) {
				i++
				continue
			}
			// A batch holds runs of one partition's records in read
			// order: the partition is looked up once per run, and its
			// end taken from the run's last record that knows it.
			ps := e.partLocked(d.pos.Partition)
			read, j, size := d.pos.Offset, i, int64(0)
			for ; j < len(ds) && ds[j].ctl == nil && ds[j].pos.Partition == ps.Name; j++ {
				size += int64(ds[j].size)
				read = max(read, ds[j].pos.Offset)
			}
			if ps.Unit == "bytes" {
				// A record's size leaves out its line terminator (and
				// blank lines between records): the position moved by
				// what was read, so the bytes read end at the file's size.
				size = max(read-ps.Read, 0)
			}
			n += size
			end := int64(-1)
			for k := j - 1; k >= i && end < 0; k-- {
				end = src.size(ds[k])
			}
			ps.noteRead(read, end)
			i = j
		}
		e.stats.Bytes += n
		e.mu.Unlock()
		if opts.Progress != nil && n > 0 {
			opts.Progress.Read(n)
		}
	}
	// takeBatch takes one batch of records at one reading of the clock,
	// and publishes what it read and buffered once.
	takeBatch := func(ds []decoded) error {
		account(ds)
		e.batchAt = e.clock.Now()
		defer func() {
			e.batchAt = time.Time{}
			e.foldEvents()
			l.note()
		}()
		for i := range ds {
			if err := take(&ds[i]); err != nil {
				return err
			}
		}
		// The plain loop is done with the batch's arenas; the
		// transaction loop holds them (txnLoop.record).
		releaseBatch(ds, pool.recycle && !pool.held)
		return nil
	}
	var asyncFailed <-chan struct{}
	if e.async != nil {
		asyncFailed = e.async.Failed()
	}
	var wakeC <-chan struct{}
	if w, ok := l.(interface{ wake() <-chan struct{} }); ok {
		wakeC = w.wake()
	}
	for pending > 0 {
		select {
		case <-asyncFailed:
			return shutdown(e.async.failed())
		case <-ctx.Done():
			return shutdown(nil)
		case err := <-done:
			pending--
			if err != nil && !errors.Is(err, context.Canceled) {
				return shutdown(err)
			}
		case ds := <-out:
			if err := takeBatch(ds); err != nil {
				return shutdown(err)
			}
		case <-timerC:
			if err := l.tick(applyCtx); err != nil {
				return shutdown(err)
			}
		case <-wakeC:
			// A unit committed: the tick lets the next one go.
			if err := l.tick(applyCtx); err != nil {
				return shutdown(err)
			}
		}
		resetTimer()
	}
	// Every reader is done; take what they queued.
	for len(out) > 0 {
		if err := takeBatch(<-out); err != nil {
			return shutdown(err)
		}
	}
	endOfInput = ctx.Err() == nil
	return shutdown(nil)
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
}

// plainLoop is the per-key buffer without transaction mode: each change is
// its own source transaction.
type plainLoop struct{ e *Engine }

func (l *plainLoop) record(ctx context.Context, d *decoded) error {
	return l.e.addDecoded(ctx, d)
}

func (l *plainLoop) note() { l.e.noteBuffer(l.e.buf.Bytes(), 0) }
func (l *plainLoop) tick(ctx context.Context) error {
	err := l.e.MaybeFlush(ctx)
	l.note()
	return err
}

func (l *plainLoop) finish(ctx context.Context) error {
	err := l.e.Flush(ctx)
	l.note()
	return err
}

// heldBack commits the buffer when it is due but was held back for a busy
// target (see Engine.MaybeFlush), as it would have been committed without
// the wait: a pipeline stopped by an error (a bad record, say) keeps what
// came before it and was due, as when every due buffer went at once.
// Nothing is committed once the committer has failed.
func (l *plainLoop) heldBack(ctx context.Context) error { return l.e.heldBack(ctx) }

func (e *Engine) heldBack(ctx context.Context) error {
	if e.async.failed() != nil || e.buf.Due(e.now(), e.policy) == reduce.NotDue {
		return nil
	}
	return e.flush(ctx, "explicit")
}

// wake gets a value when the committer is done with a unit: a buffer held
// back for it may go now.
func (l *plainLoop) wake() <-chan struct{} { return l.e.async.Freed() }

func (l *plainLoop) deadline() (time.Time, bool) {
	next := l.e.NextFlush()
	return next, !next.IsZero()
}

func (e *Engine) addDecoded(ctx context.Context, d *decoded) error {
	if d.err != nil {
		// Only the dead-letter policy lets a decoding error get here.
		e.deadLetterRecord(d, "", d.err)
		return e.MaybeFlush(ctx)
	}
	if len(d.changes) == 0 {
		return e.Consumed(ctx, d.pos)
	}
	if e.applied(d.pos) {
		// Every change of a record carries the record's position.
		return nil
	}
	if e.deadLettering() {
		if bad, err := e.checkRecord(ctx, d); err != nil || bad != nil {
			if err != nil {
				return err
			}
			e.deadLetterRecord(d, bad.c.TxnID, bad.err)
			return e.MaybeFlush(ctx)
		}
	}
	for i := range d.changes {
		if err := e.add(ctx, &d.changes[i]); err != nil {
			return err
		}
	}
	return e.MaybeFlush(ctx)
}

// batchMax is the most records one message from a reader to Run's loop
// carries.
const batchMax = 128

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
	// copied into its job, which the dead-letter policy keeps as read.
	s := newDecodeStream(pool, out, keepGoing, keepGoing, true)
	next := r.Next
	if b, ok := r.(source.Borrower); ok {
		next = b.NextBorrowed
	}
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
		rec, err := next(ctx)
		if errors.Is(err, io.EOF) {
			if !s.drain(ctx) {
				return s.stop(ctx)
			}
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// The error goes behind the records already read, so they
			// are applied before the pipeline stops.
			if !s.send(ctx, decoded{pos: changelog.Position{Partition: part}, err: err, fatal: true}) {
				return s.stop(ctx)
			}
			return nil
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
