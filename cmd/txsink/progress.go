package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mattn/go-isatty"
)

// isTerminal reports whether w is a terminal: what is written there is
// read by a person, not parsed by a script. It asks the terminal driver,
// since a character device is not enough (/dev/null is one).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// sameOutput reports whether what is written to a and to b ends up in the
// same place, so that writing a line to both shows it twice: both are
// terminals, or both are one file (2>&1).
func sameOutput(a, b io.Writer) bool {
	fa, ok := a.(*os.File)
	if !ok {
		return false
	}
	fb, ok := b.(*os.File)
	if !ok {
		return false
	}
	if isTerminal(fa) && isTerminal(fb) {
		return true
	}
	sa, err := fa.Stat()
	if err != nil {
		return false
	}
	sb, err := fb.Stat()
	return err == nil && os.SameFile(sa, sb)
}

// statusLine shows one line of status on a terminal, each new one over the
// last, at most five times a second; elsewhere it writes nothing, so logs
// and pipes get only what they asked for.
type statusLine struct {
	w    io.Writer
	on   bool
	last time.Time
	n    int // the length of the line shown, to clear it
}

func newStatusLine(w io.Writer) *statusLine { return &statusLine{w: w, on: isTerminal(w)} }

// show replaces the status with s, unless one was shown less than 200 ms
// ago.
func (l *statusLine) show(s string) {
	if !l.on || time.Since(l.last) < 200*time.Millisecond {
		return
	}
	l.last = time.Now()
	fmt.Fprintf(l.w, "\r\033[K%s", s)
	l.n = len(s)
}

// clear erases the status, if one is shown.
func (l *statusLine) clear() {
	if l.on && l.n > 0 {
		io.WriteString(l.w, "\r\033[K")
		l.n = 0
	}
}

// progressBar draws "[#####     ]  52% 12.3 of 23.6 MB, 8.1 MB/s, 180000
// events/s, ETA 2s" on a terminal; elsewhere it stays silent, so logs and
// pipes get nothing but what they asked for.
type progressBar struct {
	w     io.Writer
	total int64
	read  atomic.Int64
	start time.Time
	// events, when set, counts the changes read so far, for events/s.
	events func() int64

	// mu serialises the bar and the log lines written through Logs, so a
	// log line never lands in the middle of the bar.
	mu     sync.Mutex
	active bool
	// shown says a line drawn by show is on the terminal, not yet
	// cleared by a log line: done ends it.
	shown   bool
	stop    chan struct{}
	stopped chan struct{}
}

// newIdleBar returns a bar that draws nothing until begin: its Logs
// writer can be handed to the logger before the total is known.
func newIdleBar(w io.Writer) *progressBar {
	return &progressBar{w: w, stop: make(chan struct{}), stopped: make(chan struct{})}
}

// begin starts drawing for total bytes, with events (optional) counting
// the changes read. It draws only when w is a terminal and total is known.
func (p *progressBar) begin(total int64, events func() int64) {
	p.total, p.events, p.start = total, events, time.Now()
	if total <= 0 || !isTerminal(p.w) {
		close(p.stopped)
		return
	}
	p.mu.Lock()
	p.active = true
	p.mu.Unlock()
	go func() {
		defer close(p.stopped)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				p.mu.Lock()
				p.draw()
				fmt.Fprintln(p.w)
				p.active = false
				p.mu.Unlock()
				return
			case <-tick.C:
				p.mu.Lock()
				p.draw()
				p.mu.Unlock()
			}
		}
	}()
}

// drawing reports whether begin started drawing the bar.
func (p *progressBar) drawing() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.active
}

// show draws s over the current line, for a run the bar does not measure
// (see liveProgress): log lines written through Logs clear it first, as
// they clear the bar, and done ends its line.
func (p *progressBar) show(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "\r\033[K%s", s)
	p.active, p.shown = true, true
}

// Read implements engine.Progressor.
func (p *progressBar) Read(n int64) { p.read.Add(n) }

// percent is how much of the total has been read, in whole percent rounded
// down (a run one byte short of its end is at 99%, not 100%), and whether
// the total is known.
func (p *progressBar) percent() (int, bool) {
	if p.total <= 0 {
		return 0, false
	}
	return int(min(p.read.Load()*100/p.total, 100)), true
}

// draw writes the bar over the current line. p.mu must be held.
func (p *progressBar) draw() {
	read := p.read.Load()
	frac := min(float64(read)/float64(p.total), 1)
	el := max(time.Since(p.start).Seconds(), 1e-9)
	eta := "?"
	if frac > 0 {
		eta = (time.Duration(el/frac*(1-frac)) * time.Second).Round(time.Second).String()
	}
	events := ""
	if p.events != nil {
		events = fmt.Sprintf(", %.0f events/s", float64(p.events())/el)
	}
	rest := fmt.Sprintf(" %3.0f%% %.1f of %.1f MB, %.1f MB/s%s, ETA %s",
		frac*100, float64(read)/1e6, float64(p.total)/1e6, float64(read)/1e6/el, events, eta)
	// The bar gives up columns to the figures: a line wider than the
	// terminal wraps, and each redraw then leaves a line behind.
	width := min(max(barColumns-2-len(rest), 10), 30)
	filled := int(frac * float64(width))
	fmt.Fprintf(p.w, "\r\033[K[%s%s]%s", strings.Repeat("#", filled), strings.Repeat(" ", width-filled), rest)
}

// barColumns is how wide the bar's line may be: one short of an 80-column
// terminal, where writing the last column already wraps on some.
const barColumns = 79

// Logs returns a writer for log lines that share the bar's terminal: each
// line clears the bar first, and the next tick draws it again below.
func (p *progressBar) Logs(w io.Writer) io.Writer { return barLogWriter{p: p, w: w} }

type barLogWriter struct {
	p *progressBar
	w io.Writer
}

func (l barLogWriter) Write(b []byte) (int, error) {
	l.p.mu.Lock()
	defer l.p.mu.Unlock()
	if l.p.active {
		io.WriteString(l.w, "\r\033[K") // carriage return, erase the line
		l.p.shown = false
	}
	return l.w.Write(b)
}

// done draws the bar a last time and ends its line. It must follow begin.
func (p *progressBar) done() {
	select {
	case <-p.stopped:
		p.mu.Lock()
		if p.shown {
			fmt.Fprintln(p.w)
		}
		p.active, p.shown = false, false
		p.mu.Unlock()
		return
	default:
	}
	close(p.stop)
	<-p.stopped
}
