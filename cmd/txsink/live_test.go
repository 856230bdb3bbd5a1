package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/txsink/txsink/clock/clocktest"
	"github.com/txsink/txsink/engine"
)

// liveStart is the fake clock's time when a liveProgress starts.
var liveStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// statusAt is a Status of pipeline p with events read, rows written and
// commits made, the last commit at +lastCommit; parts are its
// partitions.
func statusAt(events, rows, commits int64, lastCommit time.Duration, buffered int64, parts ...engine.PartitionStatus) engine.Status {
	st := engine.Status{Pipeline: "p", State: engine.StateRunning, BufferedBytes: buffered, Partitions: parts,
		Stats: engine.StatsSnapshot{Events: map[string]int64{"+I": events}, Upserted: rows, Commits: commits}}
	if commits > 0 {
		st.LastCommit = liveStart.Add(lastCommit)
	}
	return st
}

// filePart is a file partition read to read, committed to committed, of size
// end.
func filePart(committed, read, end int64) engine.PartitionStatus {
	return engine.PartitionStatus{Name: "p0.jsonl", Unit: "bytes", Committed: committed, Read: read, End: end}
}

// kafkaPart is a Kafka partition committed to committed, its high
// watermark at end.
func kafkaPart(committed, end int64) engine.PartitionStatus {
	return engine.PartitionStatus{Name: "orders/0", Unit: "records", Committed: committed, Read: committed, End: end}
}

// liveStep is one report of a liveProgress: the status it reads, and
// what it says ("" for nothing).
type liveStep struct {
	name string
	st   engine.Status
	want string
}

// runLive starts l on a fake clock over the statuses of steps, advancing
// the clock one report at a time, and checks what each report said: off
// a terminal its log line (without the time), on one the line drawn.
func runLive(t *testing.T, l *liveProgress, start engine.Status, steps []liveStep) {
	t.Helper()
	clk := clocktest.New(liveStart)
	var mu sync.Mutex
	cur := start
	var out bytes.Buffer
	l.clock = clk
	l.status = func() engine.Status {
		mu.Lock()
		defer mu.Unlock()
		return cur
	}
	l.log = slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	every := l.every
	if l.draw != nil {
		every = liveRedraw
		draw := l.draw
		l.draw = func(s string) {
			draw(s)
			out.WriteString(s + "\n")
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	for i, step := range steps {
		at := liveStart.Add(time.Duration(i+1) * every)
		if err := clk.AwaitDeadline(ctx, at); err != nil {
			t.Fatalf("step %d (%s): no report due at +%v (armed %v): %v", i, step.name, at.Sub(liveStart), clk.Armed(), err)
		}
		mu.Lock()
		cur = step.st
		mu.Unlock()
		clk.Advance(every)
		// The next report armed: this one is done.
		if err := clk.AwaitDeadline(ctx, at.Add(every)); err != nil {
			t.Fatalf("step %d (%s): no next report armed: %v", i, step.name, err)
		}
		if said := strings.TrimSuffix(out.String(), "\n"); said != step.want {
			t.Errorf("report %d (%s):\n got %q\nwant %q", i, step.name, said, step.want)
		}
		out.Reset()
	}
}

// TestLiveProgressLog drives the periodic line of a following run off a
// terminal on a fake clock: a line every interval with the interval's
// rates, the lag and the last commit's age; "caught up, waiting for new
// records" once per idle period, only once a whole interval passed
// without records, and nothing more while it stays idle; degraded or
// buffering is never caught up.
func TestLiveProgressLog(t *testing.T) {
	const every = 30 * time.Second
	steps := []liveStep{
		{"busy", statusAt(3000, 1500, 2, 25*time.Second, 4096, filePart(1_000_000, 1_500_000, 2_000_000)),
			`level=INFO msg=progress pipeline=p events_per_s=100 rows_per_s=50 events=3000 rows=1500 commits=2 lag_bytes=1000000 last_commit_age=5s`},
		{"read to the end, records in the interval", statusAt(3300, 1650, 3, 58*time.Second, 0, filePart(2_000_000, 2_000_000, 2_000_000)),
			`level=INFO msg=progress pipeline=p events_per_s=10 rows_per_s=5 events=3300 rows=1650 commits=3 lag_bytes=0 last_commit_age=2s`},
		{"a quiet interval", statusAt(3300, 1650, 3, 58*time.Second, 0, filePart(2_000_000, 2_000_000, 2_000_000)),
			`level=INFO msg="caught up, waiting for new records" pipeline=p commits=3 last_commit_age=32s`},
		{"still quiet", statusAt(3300, 1650, 3, 58*time.Second, 0, filePart(2_000_000, 2_000_000, 2_000_000)), ""},
		{"records again", statusAt(3330, 1665, 3, 58*time.Second, 512, filePart(2_000_000, 2_000_100, 2_000_100)),
			`level=INFO msg=progress pipeline=p events_per_s=1 rows_per_s=1 events=3330 rows=1665 commits=3 lag_bytes=100 last_commit_age=1m32s`},
		{"committed", statusAt(3330, 1665, 4, 151*time.Second, 0, filePart(2_000_100, 2_000_100, 2_000_100)),
			`level=INFO msg=progress pipeline=p events_per_s=0 rows_per_s=0 events=3330 rows=1665 commits=4 lag_bytes=0 last_commit_age=29s`},
		{"quiet again: a new idle period", statusAt(3330, 1665, 4, 151*time.Second, 0, filePart(2_000_100, 2_000_100, 2_000_100)),
			`level=INFO msg="caught up, waiting for new records" pipeline=p commits=4 last_commit_age=59s`},
		{"quiet but read and not committed", statusAt(3330, 1665, 4, 151*time.Second, 0, filePart(2_000_100, 2_000_200, 2_000_200)),
			`level=INFO msg=progress pipeline=p events_per_s=0 rows_per_s=0 events=3330 rows=1665 commits=4 lag_bytes=100 last_commit_age=1m29s`},
		{"quiet, caught up, degraded", func() engine.Status {
			st := statusAt(3330, 1665, 4, 151*time.Second, 0, filePart(2_000_100, 2_000_100, 2_000_100))
			st.State = engine.StateDegraded
			return st
		}(), `level=INFO msg=progress pipeline=p events_per_s=0 rows_per_s=0 events=3330 rows=1665 commits=4 lag_bytes=0 last_commit_age=1m59s`},
	}
	runLive(t, &liveProgress{every: every, waits: true}, statusAt(0, 0, 0, 0, 0), steps)
}

// TestLiveProgressNoWait: a run that ends at the end of its input (files
// without follow) never says it is waiting for records; a Kafka
// partition's lag is in records; before the first commit the line says
// so; an interval of 0 logs nothing.
func TestLiveProgressNoWait(t *testing.T) {
	const every = 10 * time.Second
	steps := []liveStep{
		{"read, not committed", statusAt(50, 0, 0, 0, 100, kafkaPart(0, 70)),
			`level=INFO msg=progress pipeline=p events_per_s=5 rows_per_s=0 events=50 rows=0 commits=0 lag_records=70 last_commit="none yet"`},
		{"all committed", statusAt(70, 70, 1, 15*time.Second, 0, kafkaPart(70, 70)),
			`level=INFO msg=progress pipeline=p events_per_s=2 rows_per_s=7 events=70 rows=70 commits=1 lag_records=0 last_commit_age=5s`},
		{"quiet", statusAt(70, 70, 1, 15*time.Second, 0, kafkaPart(70, 70)),
			`level=INFO msg=progress pipeline=p events_per_s=0 rows_per_s=0 events=70 rows=70 commits=1 lag_records=0 last_commit_age=15s`},
	}
	runLive(t, &liveProgress{every: every}, statusAt(0, 0, 0, 0, 0), steps)

	off := &liveProgress{every: 0, clock: clocktest.New(liveStart), status: func() engine.Status { return engine.Status{} }}
	off.run(t.Context()) // returns at once: no timer, nothing logged
}

// TestLiveProgressTerminal: on a terminal the line is redrawn every
// second in place (through the bar, which log lines clear first), with
// the last second's rates, the lag in bytes and records, a target being
// retried, and "caught up, waiting for new records" while idle; done
// ends the line.
func TestLiveProgressTerminal(t *testing.T) {
	var term bytes.Buffer
	bar := newIdleBar(&term)
	bar.begin(0, nil)
	degraded := statusAt(1250, 400, 3, 1*time.Second, 0, filePart(5_000_000, 5_000_000, 6_500_000), kafkaPart(10, 12))
	degraded.State = engine.StateDegraded
	degraded.Retrying = &engine.RetryStatus{Attempts: 2, Since: liveStart}
	steps := []liveStep{
		{"busy", statusAt(1200, 400, 2, 500*time.Millisecond, 0, filePart(5_000_000, 5_500_000, 6_500_000)),
			"1200 events/s, 400 rows/s, lag 1.5 MB, last commit 1s ago"},
		{"target failing", degraded, "50 events/s, 0 rows/s, lag 1.5 MB + 2 records, target failing, retried 2 times, last commit 1s ago"},
		{"committed in the last second", statusAt(1250, 400, 4, 2*time.Second, 0, filePart(6_500_000, 6_500_000, 6_500_000)),
			"0 events/s, 0 rows/s, lag 0 B, last commit 1s ago"},
		{"idle", statusAt(1250, 400, 4, 2*time.Second, 0, filePart(6_500_000, 6_500_000, 6_500_000)),
			"caught up, waiting for new records; last commit 2s ago"},
		{"idle, a second on", statusAt(1250, 400, 4, 2*time.Second, 0, filePart(6_500_000, 6_500_000, 6_500_000)),
			"caught up, waiting for new records; last commit 3s ago"},
		{"a small lag", statusAt(1250, 400, 4, 2*time.Second, 0, filePart(6_500_000, 6_500_000, 6_512_300)),
			"0 events/s, 0 rows/s, lag 12.3 kB, last commit 4s ago"},
		{"following stdin: no end known", statusAt(1300, 450, 4, 2*time.Second, 0, filePart(6_500_000, 6_600_000, -1)),
			"50 events/s, 50 rows/s, last commit 5s ago"},
	}
	runLive(t, &liveProgress{every: time.Hour, waits: true, draw: bar.show}, statusAt(0, 0, 0, 0, 0), steps)
	bar.Logs(&term).Write([]byte("a log line\n"))
	bar.done()
	var want strings.Builder
	for _, step := range steps {
		want.WriteString("\r\033[K" + step.want)
	}
	want.WriteString("\r\033[Ka log line\n")
	if got := term.String(); got != want.String() {
		t.Errorf("terminal:\n got %q\nwant %q", got, want.String())
	}
}
