//go:build !unix

package reduce

import "time"

// cpuTime is not measured here.
func cpuTime() (time.Duration, bool) { return 0, false }
