package benchrun

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// TestLatencies takes the successful commits only, from any goroutine,
// and reads the percentiles by nearest rank.
func TestLatencies(t *testing.T) {
	var l latencies
	if p50, p99, m := l.percentiles(); p50 != 0 || p99 != 0 || m != 0 {
		t.Errorf("no commits: %v %v %v, want zeros", p50, p99, m)
	}
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() { l.commit(time.Duration(100-i)*time.Millisecond, nil) })
	}
	wg.Go(func() { l.commit(time.Hour, errors.New("lost")) })
	wg.Wait()
	p50, p99, m := l.percentiles()
	if p50 != 51*time.Millisecond || p99 != 100*time.Millisecond || m != 100*time.Millisecond {
		t.Errorf("percentiles of 1..100ms = %v, %v, %v; want 51ms, 100ms, 100ms", p50, p99, m)
	}
	var one latencies
	one.commit(7*time.Millisecond, nil)
	if p50, p99, m := one.percentiles(); p50 != 7*time.Millisecond || p99 != p50 || m != p50 {
		t.Errorf("one commit of 7ms: %v %v %v", p50, p99, m)
	}
}

// TestParseHWM reads the peak RSS line of /proc/PID/status, and says
// unknown when there is none that parses.
func TestParseHWM(t *testing.T) {
	for status, want := range map[string]int64{
		"Name:\ttxsink\nVmPeak:\t  900 kB\nVmHWM:\t   55600 kB\nVmRSS:\t 100 kB\n": 55600 << 10,
		"VmHWM: 0 kB":       0,
		"Name:\tx\n":        -1,
		"VmHWM:\tlots kB\n": -1,
		"":                  -1,
	} {
		if got := parseHWM(status); got != want {
			t.Errorf("parseHWM(%q) = %d, want %d", status, got, want)
		}
	}
	if got := peakRSS(); got == 0 || got < -1 {
		t.Errorf("peakRSS() = %d, want a size or -1", got)
	}
}
