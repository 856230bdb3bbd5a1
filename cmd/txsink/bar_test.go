package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestBarFitsTheTerminal draws the bar at its end for small and large
// inputs and rates: every frame says 100% once all is read and fits an
// 80-column terminal (a wider one wraps, and each redraw leaves a line
// behind), whatever the counts.
func TestBarFitsTheTerminal(t *testing.T) {
	tests := []struct {
		name   string
		total  int64
		events int64
		took   time.Duration
	}{
		{"the demo's 20,000 orders", 39_700_000, 247_125, 1500 * time.Millisecond},
		{"a large file read fast", 9_876_543_210, 99_000_000, 10 * time.Second},
		{"a tiny file", 270, 2, time.Millisecond},
		{"a slow read with an ETA in minutes", 5_000_000_000, 1_000, time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var term bytes.Buffer
			p := newIdleBar(&term)
			p.total, p.start = tt.total, time.Now().Add(-tt.took)
			p.events = func() int64 { return tt.events }
			for _, read := range []int64{tt.total / 3, tt.total} {
				p.read.Store(read)
				p.draw()
			}
			frames := strings.Split(term.String(), "\r\033[K")
			if frames[0] != "" || len(frames) != 3 {
				t.Fatalf("the bar is not redrawn in place, cleared first: %q", term.String())
			}
			for _, f := range frames[1:] {
				if len(f) > 79 || !strings.HasPrefix(f, "[") {
					t.Errorf("a frame of %d columns, want at most 79: %q", len(f), f)
				}
			}
			last := frames[2]
			if bar, _, ok := strings.Cut(last, "]"); !ok || strings.Contains(bar, " ") || !strings.Contains(last, "] 100% ") {
				t.Errorf("the bar at the end is not full at 100%%: %q", last)
			}
		})
	}
}
