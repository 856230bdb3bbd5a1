package engine

// Retries: a unit whose commit fails with a transient error (a lost
// connection, a deadlock, a target that is down) is applied again whole,
// with capped exponential backoff. While it is, Status says so (state
// degraded, Retrying), so that /readyz and /status tell an operator that
// the target is failing rather than that all is well; once the unit
// commits, one log line says the target recovered.

import (
	"context"
	"errors"
	"time"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/internal/fault"
	"github.com/txsink/txsink/observe"
	"github.com/txsink/txsink/sink"
)

// RetryStatus is observe.RetryStatus.
type RetryStatus = observe.RetryStatus

// apply applies u, retrying transient errors with capped exponential
// backoff and jitter. While it retries, the engine's status carries the
// retries (see noteRetry); once u commits after retries, apply logs that
// the target recovered, after how long and how many attempts.
func (e *Engine) apply(ctx context.Context, u *commit.Unit) (err error) {
	applyCtx := ctx
	if e.faults != nil {
		applyCtx = fault.With(ctx, e.faults)
	}
	var since time.Time // of the first failed attempt; zero before one
	var last error      // the last failed attempt's error
	attempts := 0       // of Apply, the one that commits included
	defer func() {
		if err != nil && ctx.Err() == nil {
			// The pipeline stops with err: its status stays degraded
			// until Run has returned and says failed.
			return
		}
		// Also after a unit that met no error: a library's Flush may
		// follow one that gave up (one lock per unit).
		e.clearRetry()
		if err == nil && !since.IsZero() {
			e.log.Info("target recovered: the unit being retried is committed",
				"after", e.clock.Now().Sub(since).Round(time.Millisecond), "attempts", attempts, "last_err", last)
		}
	}()
	backoff := 100 * time.Millisecond
	for attempt := 0; ; attempt++ {
		attempts++
		err := e.target.Apply(applyCtx, u)
		if err == nil {
			return nil
		}
		if !errkind.IsTransient(err) || ctx.Err() != nil {
			return err
		}
		if attempt >= e.cfg.Sink.MaxRetries {
			return exhausted(err, attempt)
		}
		wait := e.jitter(backoff)
		now := e.clock.Now()
		if since.IsZero() {
			since = now
		}
		last = err
		e.noteRetry(RetryStatus{Attempts: attempt + 1, Since: since, LastError: err.Error(), Next: now.Add(wait)})
		e.log.Warn("transient target error; retrying the unit", "attempt", attempt+1, "wait", wait, "err", err)
		e.hookRetry(attempt+1, wait, err)
		timer := e.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return errors.Join(err, ctx.Err())
		case <-timer.C():
		}
		backoff = min(backoff*2, 10*time.Second)
		// The error may have hidden a COMMIT the server carried out (the
		// connection broke after the server committed but before the
		// client heard). Applying the unit again would apply it twice —
		// append-only rows, triggers — so ask the target first.
		done, cerr := e.target.Committed(ctx, u)
		switch {
		case cerr != nil && !errkind.IsTransient(cerr):
			return cerr
		case cerr != nil:
			// The server is still away; the next attempt will say.
		case done:
			e.log.Warn("the unit was committed although its COMMIT reported an error; not applying it again", "err", err)
			return nil
		}
	}
}

// noteRetry records, for Status, that the unit being committed failed
// and is being retried.
func (e *Engine) noteRetry(r RetryStatus) {
	e.mu.Lock()
	e.stats.Retries++
	e.retry = &r
	e.mu.Unlock()
}

// clearRetry records, for Status, that no unit is being retried.
func (e *Engine) clearRetry() {
	e.mu.Lock()
	e.retry = nil
	e.mu.Unlock()
}

// jitter returns a wait between backoff/2 and backoff, drawn from the
// engine's random source, so that instances that failed together do not
// retry together.
func (e *Engine) jitter(backoff time.Duration) time.Duration {
	e.randomMu.Lock()
	defer e.randomMu.Unlock()
	return backoff/2 + time.Duration(e.random.Int64N(int64(backoff/2+1)))
}

// exhausted marks err, a transient target error that persisted through
// retries retries, as given up on, so that it no longer says txsink
// retries it.
func exhausted(err error, retries int) error {
	var te *sink.Error
	if errors.As(err, &te) {
		te.GaveUp, te.Retries = true, retries
	}
	return err
}
