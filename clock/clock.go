// Package clock is the time a component reads and waits on, as an
// interface, so that tests can drive it with a fake (package clocktest)
// instead of waiting for the wall clock.
//
// Whatever decides behaviour by time (a flush interval, a retry backoff,
// an idle fallback) reads Now and arms timers through a Clock; Real is
// the wall clock. The package is pure: it starts no goroutines and holds
// no state.
package clock

import "time"

// Clock tells the time and makes timers. Implementations are safe for
// concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a timer that sends the time on its channel once,
	// d after now; d <= 0 fires it at once.
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer, as *time.Timer with Go 1.23 semantics: after
// Stop or Reset returns, no value from before the call is received from
// C. Stop and Reset are called from one goroutine at a time, the one that
// receives from C.
type Timer interface {
	// C returns the channel the time is sent on when the timer fires. It
	// is the same channel for the timer's whole life.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it was
	// armed (false: it had fired or been stopped already).
	Stop() bool
	// Reset arms the timer to fire d after now, discarding a value not
	// yet received; it reports whether the timer was armed.
	Reset(d time.Duration) bool
}

// Real is the wall clock: time.Now and time.NewTimer.
var Real Clock = realClock{}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

// realTimer adapts *time.Timer, whose channel is a field, to Timer.
type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }
