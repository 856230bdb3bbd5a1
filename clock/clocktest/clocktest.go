// Package clocktest is a fake clock.Clock for tests: its time moves only
// when the test says so (Advance, Set), and a test can wait until the
// code under test has armed a timer (AwaitTimer, AwaitDeadline) instead of
// sleeping, so that a test of time-driven behaviour is deterministic and
// takes no wall time.
//
// A test typically starts the code under test on the fake clock, waits
// for the timer it expects (AwaitDeadline), checks that nothing happened
// yet, and advances the clock past the deadline to make it happen.
package clocktest

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/txsink/txsink/clock"
)

// Clock is a fake clock.Clock. Its methods are safe for concurrent use;
// the zero value is not usable (call New).
type Clock struct {
	mu  sync.Mutex
	now time.Time
	// armed holds the timers that will fire once the time reaches their
	// deadline.
	armed map[*timer]struct{}
	// changed is closed, and replaced, whenever a timer is armed or
	// disarmed, to wake the Await* callers.
	changed chan struct{}
}

var _ clock.Clock = (*Clock)(nil)

// New returns a fake clock whose time is start until Advance or Set
// moves it.
func New(start time.Time) *Clock {
	return &Clock{now: start, armed: map[*timer]struct{}{}, changed: make(chan struct{})}
}

// Now returns the fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer returns a timer that fires once the fake time reaches now+d
// (at once when d <= 0). Its channel holds one value: a timer that fired
// never blocks the clock.
func (c *Clock) NewTimer(d time.Duration) clock.Timer {
	t := &timer{c: c, ch: make(chan time.Time, 1)}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armLocked(t, d)
	return t
}

// Advance moves the time forward by d and fires, in deadline order, every
// timer whose deadline is then reached; each receives its deadline. The
// sends are done when Advance returns: what the code under test does on
// receiving them happens after, on its own goroutines.
func (c *Clock) Advance(d time.Duration) {
	if d < 0 {
		panic("clocktest: Advance with a negative duration")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setLocked(c.now.Add(d))
}

// Set moves the time to t, firing the timers whose deadline is reached,
// as Advance does. A t before the current time moves the time back and
// fires nothing.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setLocked(t)
}

// Armed returns the deadlines of the timers armed now, earliest first.
func (c *Clock) Armed() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.armedLocked()
}

// AwaitTimer blocks until at least one timer is armed and returns the
// earliest deadline armed; it returns ctx's error if ctx ends first.
func (c *Clock) AwaitTimer(ctx context.Context) (time.Time, error) {
	var first time.Time
	err := c.await(ctx, func(deadlines []time.Time) bool {
		if len(deadlines) == 0 {
			return false
		}
		first = deadlines[0]
		return true
	})
	return first, err
}

// AwaitDeadline blocks until a timer is armed to fire at exactly
// deadline; it returns ctx's error if ctx ends first. A test uses it to
// know that the code under test waits for the deadline it should, before
// it advances the clock there.
func (c *Clock) AwaitDeadline(ctx context.Context, deadline time.Time) error {
	return c.await(ctx, func(deadlines []time.Time) bool {
		return slices.ContainsFunc(deadlines, deadline.Equal)
	})
}

// await blocks until ok holds for the armed deadlines, or ctx ends.
func (c *Clock) await(ctx context.Context, ok func([]time.Time) bool) error {
	for {
		c.mu.Lock()
		done, changed := ok(c.armedLocked()), c.changed
		c.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (c *Clock) armedLocked() []time.Time {
	ds := make([]time.Time, 0, len(c.armed))
	for t := range c.armed {
		ds = append(ds, t.deadline)
	}
	slices.SortFunc(ds, time.Time.Compare)
	return ds
}

func (c *Clock) setLocked(now time.Time) {
	for {
		var next *timer
		for t := range c.armed {
			if !t.deadline.After(now) && (next == nil || t.deadline.Before(next.deadline)) {
				next = t
			}
		}
		if next == nil {
			break
		}
		if next.deadline.After(c.now) {
			c.now = next.deadline
		}
		c.fireLocked(next)
	}
	c.now = now
}

// armLocked arms t to fire d after now, or fires it at once.
func (c *Clock) armLocked(t *timer, d time.Duration) {
	t.deadline = c.now.Add(d)
	if d <= 0 {
		t.ch <- c.now
		return
	}
	c.armed[t] = struct{}{}
	c.notifyLocked()
}

func (c *Clock) fireLocked(t *timer) {
	delete(c.armed, t)
	// The channel is empty: a timer is drained before it is armed, and
	// fires once per arming.
	t.ch <- t.deadline
	c.notifyLocked()
}

// disarmLocked stops t and drops a value it sent and nobody received; it
// reports whether t was armed.
func (c *Clock) disarmLocked(t *timer) bool {
	_, was := c.armed[t]
	if was {
		delete(c.armed, t)
		c.notifyLocked()
	}
	select {
	case <-t.ch:
	default:
	}
	return was
}

func (c *Clock) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// timer is a clock.Timer of a fake Clock.
type timer struct {
	c        *Clock
	ch       chan time.Time
	deadline time.Time
}

func (t *timer) C() <-chan time.Time { return t.ch }

func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	return t.c.disarmLocked(t)
}

func (t *timer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.c.disarmLocked(t)
	t.c.armLocked(t, d)
	return was
}
