package clocktest_test

import (
	"context"
	"testing"
	"time"

	"github.com/txsink/txsink/clock/clocktest"
)

var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// received reports the value waiting on ch, if any, without blocking.
func received(ch <-chan time.Time) (time.Time, bool) {
	select {
	case v := <-ch:
		return v, true
	default:
		return time.Time{}, false
	}
}

func TestTimers(t *testing.T) {
	tests := []struct {
		name  string
		run   func(c *clocktest.Clock) <-chan time.Time
		want  time.Time
		fired bool
		armed int // timers left armed
	}{
		{"fires at its deadline", func(c *clocktest.Clock) <-chan time.Time {
			tm := c.NewTimer(time.Second)
			c.Advance(time.Second)
			return tm.C()
		}, start.Add(time.Second), true, 0},
		{"not before its deadline", func(c *clocktest.Clock) <-chan time.Time {
			tm := c.NewTimer(time.Second)
			c.Advance(time.Second - time.Nanosecond)
			return tm.C()
		}, time.Time{}, false, 1},
		{"a zero duration fires at once", func(c *clocktest.Clock) <-chan time.Time {
			return c.NewTimer(0).C()
		}, start, true, 0},
		{"stopped never fires", func(c *clocktest.Clock) <-chan time.Time {
			tm := c.NewTimer(time.Second)
			if !tm.Stop() {
				t.Error("Stop of an armed timer = false")
			}
			c.Advance(time.Hour)
			return tm.C()
		}, time.Time{}, false, 0},
		{"reset drops a value not received", func(c *clocktest.Clock) <-chan time.Time {
			tm := c.NewTimer(time.Second)
			c.Advance(time.Second)
			if tm.Reset(time.Minute) {
				t.Error("Reset of a fired timer = true")
			}
			return tm.C()
		}, time.Time{}, false, 1},
		{"reset moves the deadline", func(c *clocktest.Clock) <-chan time.Time {
			tm := c.NewTimer(time.Second)
			tm.Reset(2 * time.Second)
			c.Set(start.Add(2 * time.Second))
			return tm.C()
		}, start.Add(2 * time.Second), true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := clocktest.New(start)
			got, fired := received(tc.run(c))
			if fired != tc.fired || !got.Equal(tc.want) {
				t.Errorf("received %v (%v), want %v (%v)", got, fired, tc.want, tc.fired)
			}
			if n := len(c.Armed()); n != tc.armed {
				t.Errorf("%d timers armed, want %d", n, tc.armed)
			}
		})
	}
}

// TestAdvanceFiresInOrder checks that one Advance past several deadlines
// fires each timer with its own deadline, and leaves the time at the end.
func TestAdvanceFiresInOrder(t *testing.T) {
	c := clocktest.New(start)
	late, early := c.NewTimer(2*time.Second), c.NewTimer(time.Second)
	c.Advance(time.Minute)
	for _, tc := range []struct {
		ch   <-chan time.Time
		want time.Time
	}{{early.C(), start.Add(time.Second)}, {late.C(), start.Add(2 * time.Second)}} {
		if got, ok := received(tc.ch); !ok || !got.Equal(tc.want) {
			t.Errorf("received %v (%v), want %v", got, ok, tc.want)
		}
	}
	if got := c.Now(); !got.Equal(start.Add(time.Minute)) {
		t.Errorf("Now = %v, want %v", got, start.Add(time.Minute))
	}
}

// TestAwait checks that AwaitTimer and AwaitDeadline return once another
// goroutine arms the timer they wait for, and with ctx's error without.
func TestAwait(t *testing.T) {
	c := clocktest.New(start)
	armed := make(chan struct{})
	go func() {
		c.NewTimer(time.Hour)
		c.NewTimer(time.Second)
		close(armed)
	}()
	if err := c.AwaitDeadline(t.Context(), start.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	<-armed
	if got, err := c.AwaitTimer(t.Context()); err != nil || !got.Equal(start.Add(time.Second)) {
		t.Errorf("AwaitTimer = %v, %v; want the earliest deadline", got, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.AwaitDeadline(ctx, start.Add(time.Minute)); err != context.Canceled {
		t.Errorf("AwaitDeadline of a deadline never armed = %v, want context.Canceled", err)
	}
}
