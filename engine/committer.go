package engine

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/txsink/txsink/commit"
)

// committer applies units on a goroutine of its own, so that while the
// target commits one unit the engine loop reads, decodes and reduces the
// next: the database is never idle waiting for txsink, nor txsink for it.
//
// Units are applied one at a time, in the order they were submitted, so
// the guarantees are unchanged: each unit is one target transaction, and
// positions only grow. Submit hands over a unit and returns once the
// committer has taken it, which is once the previous unit is committed: at
// most one unit is applied while the next one is built, so memory stays
// within twice the flush limits. After a failed unit nothing more is
// applied; the error comes back from the next Submit or Wait.
type committer struct {
	e     *Engine
	ctx   context.Context
	units chan pendingUnit
	idle  sync.WaitGroup // one count per unit submitted and not yet done
	done  chan struct{}
	// pending counts the units submitted and not yet done; freed gets a
	// value (if it has room) each time one is done, so that a loop
	// holding a buffer back while the target is busy hears when it is
	// free (see Engine.MaybeFlush).
	pending atomic.Int32
	freed   chan struct{}

	mu     sync.Mutex
	err    error
	failCh chan struct{} // closed when a unit fails
}

type pendingUnit struct {
	u      *commit.Unit
	reason string
	txns   int    // source transactions the unit commits (transaction mode)
	done   func() // called on the committer's goroutine once u is committed
	// stream, when set, makes u a part loaded ahead of its unit (see
	// streaming) rather than a unit: its failure fails nothing, and done
	// is called either way.
	stream *streaming
}

func newCommitter(ctx context.Context, e *Engine) *committer {
	c := &committer{e: e, ctx: ctx, units: make(chan pendingUnit), done: make(chan struct{}), failCh: make(chan struct{}),
		freed: make(chan struct{}, 1)}
	go c.loop()
	return c
}

func (c *committer) loop() {
	defer close(c.done)
	for p := range c.units {
		if p.stream != nil {
			if c.failed() == nil {
				c.e.streamPart(c.ctx, p)
			}
			// Idle before done wakes the loop, so that it finds the
			// committer free for the next part.
			c.pending.Add(-1)
			c.idle.Done()
			if p.done != nil {
				p.done()
			}
			continue
		}
		if c.failed() == nil {
			if err := c.e.commitUnit(c.ctx, p.u, p.reason, p.txns); err != nil {
				c.mu.Lock()
				c.err = err
				c.mu.Unlock()
				close(c.failCh)
			} else if p.done != nil {
				p.done()
			}
		}
		c.pending.Add(-1)
		select {
		case c.freed <- struct{}{}:
		default:
		}
		c.idle.Done()
	}
}

// Busy reports whether a unit is being applied (or handed over and not
// yet taken).
func (c *committer) Busy() bool { return c.pending.Load() > 0 }

// Freed gets a value each time a unit is done (one value stands for any
// number of them).
func (c *committer) Freed() <-chan struct{} { return c.freed }

// Failed is closed once a unit has failed, so the engine loop stops at
// once rather than at its next commit.
func (c *committer) Failed() <-chan struct{} { return c.failCh }

// failed returns the error a unit failed with, if any.
func (c *committer) failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Submit hands u to the committer, waiting while the previous unit is
// being applied.
func (c *committer) Submit(u *commit.Unit, reason string) error {
	return c.submit(pendingUnit{u: u, reason: reason})
}

func (c *committer) submit(p pendingUnit) error {
	if err := c.failed(); err != nil {
		return err
	}
	c.idle.Add(1)
	c.pending.Add(1)
	c.units <- p
	return c.failed()
}

// Wait returns once every submitted unit is applied (or failed), with the
// first error.
func (c *committer) Wait() error {
	c.idle.Wait()
	return c.failed()
}

// Close waits for the committer to finish and stops it.
func (c *committer) Close() error {
	err := c.Wait()
	close(c.units)
	<-c.done
	return err
}
