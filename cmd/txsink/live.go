package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/txsink/txsink/clock"
	"github.com/txsink/txsink/engine"
)

// liveProgress says how a run is doing while it runs, where the progress
// bar cannot: a run without a known end (source.follow, Kafka, standard
// input), or any run whose stderr is not a terminal.
//
// On a terminal (draw set) it redraws one line every second: "1200
// events/s, 830 rows/s, lag 1.2 MB, last commit 1s ago". Elsewhere it
// logs that at info every interval, so that a service's log shows it is
// alive without a line per commit. A run that waits for new records at
// the end of its input (waits) can catch up: everything read is
// committed, nothing buffered, nothing is being retried, and every
// partition whose end is known is read to it. It then says "caught up,
// waiting for new records" once, and nothing more while it stays caught
// up; on a terminal the line says it until then.
//
// The clock drives it, so that a test decides when each report is due.
type liveProgress struct {
	clock  clock.Clock
	status func() engine.Status
	log    *slog.Logger
	// draw shows a line in place of the last on a terminal; nil logs
	// every interval instead.
	draw  func(string)
	every time.Duration
	waits bool

	last sample
	idle bool // caught up at the last report, and said so
}

// liveRedraw is how often the terminal's line is redrawn.
const liveRedraw = time.Second

// sample is what the rates are measured between: the events read, the
// rows written and the commits made, at a time.
type sample struct {
	at                    time.Time
	events, rows, commits int64
}

func sampleOf(at time.Time, st engine.Status) sample {
	s := sample{at: at, rows: st.Stats.Upserted + st.Stats.Deleted + st.Stats.Inserted, commits: st.Stats.Commits}
	for _, n := range st.Stats.Events {
		s.events += n
	}
	return s
}

// run reports until ctx is done. An interval of 0 or less off a
// terminal reports nothing.
func (l *liveProgress) run(ctx context.Context) {
	every := l.every
	if l.draw != nil {
		every = liveRedraw
	}
	if every <= 0 {
		return
	}
	l.last = sampleOf(l.clock.Now(), l.status())
	timer := l.clock.NewTimer(every)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C():
		}
		l.report(l.clock.Now(), l.status())
		timer.Reset(every)
	}
}

// report says how the run is doing at now: a line of progress, or that
// it caught up (once per idle period, off a terminal).
func (l *liveProgress) report(now time.Time, st engine.Status) {
	cur := sampleOf(now, st)
	prev := l.last
	l.last = cur
	moved := cur.events != prev.events || cur.rows != prev.rows || cur.commits != prev.commits
	// A period with records read, rows written or a commit is not
	// idle, even if it ends caught up: a trickle of records would
	// otherwise say "caught up" every interval. The first quiet report
	// after it says so.
	if l.waits && !moved && caughtUp(st) {
		if l.draw != nil {
			l.draw("caught up, waiting for new records; " + lastCommitText(now, st))
		} else if !l.idle {
			attrs := []any{"pipeline", st.Pipeline, "commits", st.Stats.Commits}
			if !st.LastCommit.IsZero() {
				attrs = append(attrs, "last_commit_age", age(now, st.LastCommit))
			}
			l.log.Info("caught up, waiting for new records", attrs...)
		}
		l.idle = true
		return
	}
	l.idle = false
	secs := max(now.Sub(prev.at).Seconds(), 1e-9)
	evRate, rowRate := float64(cur.events-prev.events)/secs, float64(cur.rows-prev.rows)/secs
	lag := lagOf(st)
	if l.draw != nil {
		parts := []string{fmt.Sprintf("%.0f events/s", evRate), fmt.Sprintf("%.0f rows/s", rowRate)}
		if t := lag.String(); t != "" {
			parts = append(parts, "lag "+t)
		}
		if st.Retrying != nil {
			parts = append(parts, fmt.Sprintf("target failing, retried %s", countOf(st.Retrying.Attempts, "time")))
		}
		l.draw(strings.Join(append(parts, lastCommitText(now, st)), ", "))
		return
	}
	attrs := []any{"pipeline", st.Pipeline, "events_per_s", int64(evRate + 0.5), "rows_per_s", int64(rowRate + 0.5),
		"events", cur.events, "rows", cur.rows, "commits", st.Stats.Commits}
	if lag.inBytes {
		attrs = append(attrs, "lag_bytes", lag.bytes)
	}
	if lag.inRecords {
		attrs = append(attrs, "lag_records", lag.records)
	}
	if st.LastCommit.IsZero() {
		attrs = append(attrs, "last_commit", "none yet")
	} else {
		attrs = append(attrs, "last_commit_age", age(now, st.LastCommit))
	}
	l.log.Info("progress", attrs...)
}

// caughtUp reports whether st has nothing left to do: every partition
// committed as far as it was read, and read to its end when the end is
// known, nothing buffered or being retried.
func caughtUp(st engine.Status) bool {
	if st.State != engine.StateRunning || st.BufferedBytes > 0 || st.OpenTxns > 0 || len(st.Partitions) == 0 {
		return false
	}
	for _, p := range st.Partitions {
		if p.Committed < p.Read || p.End >= 0 && p.Committed < p.End {
			return false
		}
	}
	return true
}

// lag is what the partitions whose end is known have left to commit
// (end minus committed): files in bytes, Kafka partitions in records.
type lag struct {
	bytes, records     int64
	inBytes, inRecords bool // some partition's end is known in that unit
}

func lagOf(st engine.Status) lag {
	var l lag
	for _, p := range st.Partitions {
		if p.End < 0 {
			continue
		}
		n := max(p.End-p.Committed, 0)
		if p.Unit == "records" {
			l.records, l.inRecords = l.records+n, true
		} else {
			l.bytes, l.inBytes = l.bytes+n, true
		}
	}
	return l
}

// String writes the lag: "1.2 MB", "5000 records", both joined by "+",
// or "" when no partition's end is known.
func (l lag) String() string {
	var parts []string
	if l.inBytes {
		parts = append(parts, bytesText(l.bytes))
	}
	if l.inRecords {
		parts = append(parts, countOf(l.records, "record"))
	}
	return strings.Join(parts, " + ")
}

// lastCommitText says when the last commit was: "last commit 3s ago".
func lastCommitText(now time.Time, st engine.Status) string {
	if st.LastCommit.IsZero() {
		return "no commit yet"
	}
	return "last commit " + age(now, st.LastCommit).String() + " ago"
}

// age is how long ago t was, to the second.
func age(now, t time.Time) time.Duration {
	return max(now.Sub(t), 0).Round(time.Second)
}

// bytesText writes n bytes for a person: "512 B", "12.3 kB", "1.2 MB".
func bytesText(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
