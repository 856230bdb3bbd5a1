package benchrun

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/internal/cputime"
)

// Pipeline is one round's txsink run over the workload: what the bench
// times, profiles and reads the figures of.
type Pipeline interface {
	// Run applies the whole workload and returns when it is consumed.
	Run(ctx context.Context) error
	// Stats returns what the run read, wrote and committed.
	Stats() Stats
	// Close releases the pipeline's connections.
	Close() error
}

// Stats are the figures of a finished run the report shows.
type Stats struct {
	Events                               map[changelog.Kind]int64 // changes read, by kind
	Upserted, Deleted, Inserted, Commits int64
}

// Opener builds the pipeline of one round from cfg, as `txsink run` would
// (its memory tuning and hooks included), with commit called after every
// commit the pipeline attempts: how long it took and its error, nil when
// it succeeded. Building it is not timed: the round's clock starts at Run.
type Opener func(ctx context.Context, cfg *config.Config, commit func(took time.Duration, err error)) (Pipeline, error)

// applyRound runs txsink once over the workload, through a pipeline of
// open's, and returns the round's figures. The first round's run is the
// one profiled and traced, as o asks.
func (r *Result) applyRound(ctx context.Context, o *Options, open Opener, cfg *config.Config, first bool, stderr io.Writer) (round, error) {
	rr := round{peakRSS: -1, serverCPU: -1, bulkServerCPU: -1}
	lat := &latencies{}
	p, err := open(ctx, cfg, lat.commit)
	if err != nil {
		return rr, err
	}
	defer p.Close()
	// The generator's memory (or the last round's) is garbage now; return
	// it to the system and restart the high-water mark, so peak RSS is
	// the run's own.
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		rr.rssNote = "whole process, generation included: could not reset the high-water mark (" + err.Error() + ")"
	}
	if o.CPUProfile != "" && first {
		stop, err := startWriting(o.CPUProfile, "cpu profile", pprof.StartCPUProfile, pprof.StopCPUProfile)
		if err != nil {
			return rr, err
		}
		defer stop()
		r.profile = o.CPUProfile
	}
	if o.TraceFile != "" && first {
		stop, err := startWriting(o.TraceFile, "trace", trace.Start, trace.Stop)
		if err != nil {
			return rr, err
		}
		defer stop()
	}
	if o.MemProfile != "" && first {
		if err := writeAllocs(o.MemProfile + ".before"); err != nil {
			return rr, err
		}
		r.memProfile = o.MemProfile
	}
	fmt.Fprintf(stderr, "txsink bench: applying %d events to %s\n", r.events, cfg.Target.String())
	cpu0, cpuOK := cputime.Process()
	server0, serverOK := r.serverCPU()
	start := time.Now()
	runErr := p.Run(ctx)
	rr.run = time.Since(start)
	rr.cpu = -1
	if cpu1, ok := cputime.Process(); ok && cpuOK {
		rr.cpu = cpu1 - cpu0
	}
	if server1, ok := r.serverCPU(); ok && serverOK {
		rr.serverCPU = server1 - server0
	}
	if runErr != nil {
		return rr, runErr
	}
	if o.MemProfile != "" && first {
		if err := writeAllocs(o.MemProfile); err != nil {
			return rr, err
		}
	}
	rr.peakRSS = peakRSS()
	st := p.Stats()
	var events int64
	for k, n := range st.Events {
		if k != changelog.EndTxn {
			events += n
		}
	}
	if events != r.events {
		return rr, fmt.Errorf("the engine read %d events, the workload has %d", events, r.events)
	}
	rr.upserted, rr.deleted, rr.inserted, rr.commits = st.Upserted, st.Deleted, st.Inserted, st.Commits
	rr.p50, rr.p99, rr.maxLatency = lat.percentiles()
	return rr, nil
}

// latencies records how long each successful commit took. Commits may be
// reported from several goroutines.
type latencies struct {
	mu   sync.Mutex
	took []time.Duration
}

func (l *latencies) commit(took time.Duration, err error) {
	if err != nil {
		return
	}
	l.mu.Lock()
	l.took = append(l.took, took)
	l.mu.Unlock()
}

// percentiles returns the median, the 99th percentile and the longest of
// the recorded commits' times (nearest rank, rounding up), all 0 when
// none was recorded.
func (l *latencies) percentiles() (p50, p99, maxTook time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.took) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(l.took)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))] }
	return at(0.50), at(0.99), s[len(s)-1]
}

// peakRSS returns the process's peak resident set size (VmHWM) in bytes,
// or -1 when /proc does not say.
func peakRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	return parseHWM(string(data))
}

// parseHWM returns the VmHWM line of a /proc/PID/status text in bytes, or
// -1 when it has none that parses.
func parseHWM(status string) int64 {
	for _, line := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}

// writeAllocs writes the allocations profile of the process so far to
// path. Two of them, taken before and after a run, give the run's own
// allocations as their difference (pprof's -diff_base).
func writeAllocs(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("allocations profile: %w", err)
	}
	return f.Close()
}

// startWriting creates path and starts a profiler (start) writing to it;
// the function it returns stops the profiler (stop) and closes the file.
func startWriting(path, what string, start func(io.Writer) error, stop func()) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return func() {
		stop()
		f.Close()
	}, nil
}
