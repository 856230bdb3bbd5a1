//go:build unix

package reduce

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process has used, its garbage
// collector's included. Benchmarks report it beside the wall time: on a
// machine shared with a database, wall time measures the neighbours too.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
