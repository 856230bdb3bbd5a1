package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/sink/sqlsink"
	"github.com/txsink/txsink/source/file"
	"github.com/txsink/txsink/source/kafka"
)

// feed is a running source: the goroutines that read and decode records
// into Run's channel, and what Run needs to know of them.
type feed struct {
	// readers goroutines were started; each sends one value on done when
	// it returns.
	readers int
	done    chan error
	// loopDone is closed when Run's loop stops taking records, so that a
	// rebalance callback waiting for the loop gives up.
	loopDone chan struct{}
	// close releases the source once every reader has returned.
	close func()
	// size returns the end of d's partition (for lag), or -1.
	size func(d decoded) int64
	// owned, when not nil, holds the partitions this instance owns now
	// (Kafka); records of other partitions are dropped. Only Run's
	// goroutine touches it.
	owned map[string]bool
	// committed, when set, is told of the positions of every commit.
	// It is called from the goroutine that committed.
	committed func(ctx context.Context, progress []changelog.Position)
	// mark, when set, fingerprints a position for its progress row (see
	// commit.Unit.Marks). It is called from the goroutine that commits, in
	// the order of the positions.
	mark func(pos changelog.Position) (string, error)
}

// filePartitions returns the partitions of the configured file source:
// source.paths as one, or each of source.partitions.
func (e *Engine) filePartitions() []file.Partition {
	var out []file.Partition
	for _, paths := range e.cfg.Source.FilePartitions() {
		name := PartitionName(paths[0], e.baseDir)
		p := file.Partition{Name: name, Paths: paths, BaseDir: e.baseDir, Follow: e.cfg.Source.Follow,
			ResetHint: e.resetCommand(name)}
		if n := e.cfg.Source.MaxRecordBytes; n > 0 {
			p.MaxRecordBytes = int(min(n, int64(math.MaxInt32)))
		}
		out = append(out, p)
	}
	return out
}

// CheckSources opens every file partition of cfg as Run does, at the
// position stored for it (stored: the pipeline's progress rows, as
// sqlsink.DB.Stored returns them), verified against its mark, and closes it
// again. It returns, joined, a *SourceError for each refusal Run would
// start with: the same file listed twice, a partition's file missing,
// replaced or truncated under its stored position. Streams (standard
// input, a FIFO) are left alone: opening them would consume them. It
// writes nothing.
func CheckSources(ctx context.Context, cfg *config.Config, stored []sqlsink.Stored, opts ...Option) error {
	if cfg.Source.Type != config.SourceFile {
		return nil
	}
	e := &Engine{cfg: cfg}
	for _, o := range opts {
		o(e)
	}
	specs := e.filePartitions()
	at := make(map[string]sqlsink.Stored, len(stored))
	for _, s := range stored {
		at[s.Partition] = s
	}
	var errs []error
	for _, spec := range specs {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if file.IsStream(spec) {
			continue
		}
		s := at[spec.Name]
		start := s.Position
		start.Partition = spec.Name
		r, _, err := file.OpenSequence(spec, start, s.Mark)
		if err != nil {
			errs = append(errs, &SourceError{Partition: spec.Name, Err: fmt.Errorf("source: %w", err)})
			continue
		}
		r.Close()
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	// Run checks this first; here it comes last, so that a missing file
	// is reported with its partition.
	if err := file.CheckDistinct(specs); err != nil {
		return &SourceError{Err: fmt.Errorf("source: %w", err)}
	}
	// Run refuses stored progress of a partition it does not read before it
	// opens a file; so does check, once the files themselves are known good.
	positions := make(map[string]changelog.Position, len(stored))
	for _, s := range stored {
		positions[s.Partition] = s.Position
	}
	if err := e.checkStoredPartitions(positions); err != nil {
		return &SourceError{Err: err}
	}
	return nil
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

// openFiles starts one reader per partition of the file source, from the
// stored progress on, once each stored position is verified. A stream
// (standard input, a pipe) is read from its start: its stored position
// is rewound.
func (e *Engine) openFiles(ctx context.Context, pool *decodePool, out chan<- []decoded) (*feed, error) {
	specs := e.filePartitions()
	if err := file.CheckDistinct(specs); err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	f := &feed{done: make(chan error, len(specs)), loopDone: make(chan struct{})}
	readers := make([]*file.Sequence, 0, len(specs))
	parts := make([]string, 0, len(specs))
	byPart := make(map[string]*file.Sequence, len(specs))
	f.close = func() {
		for _, r := range readers {
			r.Close()
		}
	}
	f.size = func(d decoded) int64 {
		if r := byPart[d.pos.Partition]; r != nil {
			return r.Size()
		}
		return -1
	}
	f.mark = func(pos changelog.Position) (string, error) {
		if r := byPart[pos.Partition]; r != nil {
			return r.Mark(pos)
		}
		return "", nil
	}
	for _, spec := range specs {
		part := spec.Name
		start, _ := e.Progress(part)
		start.Partition = part
		if file.IsStream(spec) {
			if err := e.rewind(ctx, part); err != nil {
				f.close()
				return nil, err
			}
			start = changelog.Position{Partition: part}
		}
		r, warn, err := file.OpenSequence(spec, start, e.marks[part])
		if err != nil {
			f.close()
			return nil, fmt.Errorf("source: %w", err)
		}
		if warn != nil {
			e.log.Warn("resuming at a position that cannot be fully verified", "partition", part, "reason", warn.Error())
		}
		readers = append(readers, r)
		parts = append(parts, part)
		byPart[part] = r
		e.noteRead(part, start.Offset, r.Size())
	}
	keepGoing := e.deadLettering() && !e.cfg.Sink.TxnEnabled
	for i, r := range readers {
		f.readers++
		// Each partition decodes on its own goroutine; the engine loop
		// stays the only writer of the buffer.
		go func() {
			f.done <- readPartition(ctx, r, parts[i], pool, out, keepGoing)
		}()
	}
	return f, nil
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
	if jl, ok := l.(*joinLoop); ok {
		if err := jl.checkAssigned(parts); err != nil {
			return nil, err
		}
	}
	claimed, err := e.target.Claim(ctx, e.cfg.Name, parts)
	if err != nil {
		return nil, err
	}
	if busy, err := e.target.Hold(ctx, e.cfg.Name, parts); err != nil {
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
	dropped, unit := 0, "changes"
	switch l := l.(type) {
	case *txnLoop:
		for _, p := range parts {
			dropped += l.m.Drop(p)
			l.forget(p)
		}
		e.noteBuffer(l.m.Bytes(), l.m.OpenTxns())
	case *joinLoop:
		dropped, unit = l.j.Open(), "transactions"
		if err := l.revoked(parts, e.feed.owned); err != nil {
			return err
		}
	}
	e.mu.Lock()
	for _, p := range parts {
		delete(e.feed.owned, p)
		delete(e.parts, p)
		e.buf.Forget(p)
	}
	e.mu.Unlock()
	if err := e.target.Release(ctx, e.cfg.Name, parts); err != nil {
		e.log.Warn("giving up the locks of revoked partitions", "partitions", parts, "err", err)
	}
	e.log.Info("partitions revoked", "partitions", parts, "dropped", dropped, "dropped_unit", unit)
	return nil
}

// revokeDeadline bounds the commit a revocation waits for: the rebalance
// waits for it, and Kafka's default rebalance timeout is one minute.
const revokeDeadline = 50 * time.Second

// openKafka joins the consumer group and starts the goroutine that polls
// and decodes.
func (e *Engine) openKafka(ctx context.Context, pool *decodePool, out chan<- []decoded) (*feed, error) {
	f := &feed{done: make(chan error, 1), loopDone: make(chan struct{}), owned: map[string]bool{}}
	g := &kafkaGroup{out: out, loopDone: f.loopDone}
	c, err := kafka.Open(&e.cfg.Source, g, e.log)
	if err != nil {
		return nil, err
	}
	f.close = func() {
		// The last commits' offsets, synchronously, so that lag tools see
		// where this instance stopped; then leave the group.
		var last []changelog.Position
		for part := range f.owned {
			if pos, ok := e.Progress(part); ok && pos.Offset > 0 {
				last = append(last, pos)
			}
		}
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c.CommitOffsetsSync(cctx, last)
		cancel()
		c.Close()
	}
	f.size = func(d decoded) int64 { return d.end }
	f.committed = c.CommitOffsets
	keepGoing := e.deadLettering() && !e.cfg.Sink.TxnEnabled
	f.readers = 1
	go func() { f.done <- pollKafka(ctx, c, pool, out, keepGoing) }()
	return f, nil
}

// pollKafka polls and decodes (through the pool) until ctx is done or the
// source fails, handing every polled record on before it lets a
// rebalance proceed, so that ownership changes reach Run's loop in order
// with the records.
func pollKafka(ctx context.Context, c *kafka.Consumer, pool *decodePool, out chan<- []decoded, keepGoing bool) error {
	// Polled records own their bytes: the jobs take them as they are.
	s := newDecodeStream(pool, out, true, keepGoing, false) // a stream of every partition
	for {
		b, err := c.Poll(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.send(ctx, decoded{err: err, fatal: true})
			return nil
		}
		for _, rec := range b.Records {
			s.addOwned(rec.Data, rec.Pos, b.Ends[rec.Pos.Partition])
			if s.full() && !s.submit(ctx) {
				c.Release()
				return s.stop(ctx)
			}
		}
		// Everything polled is handed on before a rebalance may run.
		if !s.drain(ctx) {
			c.Release()
			return s.stop(ctx)
		}
		c.Release()
	}
}

// kafkaGroup hands the consumer's group callbacks to Run's loop.
type kafkaGroup struct {
	out      chan<- []decoded
	loopDone <-chan struct{}
}

func (g *kafkaGroup) send(ctx context.Context, c *control) controlReply {
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

// Assigned implements kafka.Group.
func (g *kafkaGroup) Assigned(ctx context.Context, parts []string) (map[string]int64, error) {
	r := g.send(ctx, &control{assign: slices.Clone(parts)})
	return r.offsets, r.err
}

// Revoked implements kafka.Group.
func (g *kafkaGroup) Revoked(ctx context.Context, parts []string) {
	g.send(ctx, &control{revoke: slices.Clone(parts)})
}

// Lost implements kafka.Group.
func (g *kafkaGroup) Lost(ctx context.Context, parts []string) {
	g.send(ctx, &control{lost: slices.Clone(parts)})
}
