package source

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Wait is what Await waits for, at the start of a run: a server that must
// answer before the pipeline can read (a source's brokers) or write (the
// target database).
type Wait struct {
	// What names what is awaited, with its address, for the log and the
	// error ("the Kafka brokers 10.0.0.5:9092").
	What string
	// Timeout is how long to wait (startup-timeout); 0 tries once.
	Timeout time.Duration
	// Hint says what to check when the wait ends without an answer.
	Hint string
	// Log receives one line per failed try while waiting; nil logs
	// nothing.
	Log *slog.Logger
}

// awaitFirstRetry and awaitMaxRetry bound the pause between two tries:
// it doubles from the first to the most. Variables for the package's
// tests, which shorten them.
var (
	awaitFirstRetry = 500 * time.Millisecond
	awaitMaxRetry   = 5 * time.Second
)

// Await calls try until it succeeds, fails with an error waitable says is
// not worth waiting out (the server answered: a refused password, an
// unknown database), or w.Timeout has passed since the first try; each
// try runs on a context that ends with the wait. While waiting it logs
// what it waits for, why and for how long at warn, and once the server
// answers after a wait, that it did at info. A timeout's error names what
// was awaited, how long, the last error and w.Hint; ctx ending returns
// ctx's error. The timeout is on the wall clock: it bounds a wait on a
// server, which no pipeline behaviour depends on.
func Await(ctx context.Context, w Wait, try func(context.Context) error, waitable func(error) bool) error {
	log := w.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	wctx, cancel := ctx, context.CancelFunc(func() {})
	if w.Timeout > 0 {
		wctx, cancel = context.WithTimeout(ctx, w.Timeout)
	}
	defer cancel()
	pause := awaitFirstRetry
	gaveUp := func(tries int, err error) error {
		return fmt.Errorf("%s did not answer within startup-timeout (%s, %d tries): %w; %s",
			w.What, w.Timeout, tries, err, w.Hint)
	}
	for tries := 1; ; tries++ {
		err := try(wctx)
		switch {
		case err == nil:
			if tries > 1 {
				log.Info(w.What+" answered", "waited", time.Since(start).Round(time.Millisecond), "tries", tries)
			}
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case w.Timeout <= 0:
			return err
		case wctx.Err() != nil:
			// The try was cut short by the end of the wait.
			return gaveUp(tries, err)
		case !waitable(err):
			return err
		}
		log.Warn("waiting for "+w.What+" to answer", "err", err,
			"waited", time.Since(start).Round(time.Millisecond), "startup-timeout", w.Timeout)
		t := time.NewTimer(pause)
		select {
		case <-wctx.Done():
			t.Stop()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return gaveUp(tries, err)
		case <-t.C:
		}
		pause = min(2*pause, awaitMaxRetry)
	}
}
