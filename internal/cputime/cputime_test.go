//go:build unix

package cputime

import "testing"

var sink int

func TestProcessGrows(t *testing.T) {
	before, ok := Process()
	if !ok {
		t.Fatal("Process: no CPU time on a unix system")
	}
	// A busy loop: the process's CPU time must grow.
	x := 0
	for i := range 200_000_000 {
		x ^= i
	}
	sink = x
	if after, _ := Process(); after <= before {
		t.Errorf("CPU time did not grow over a busy loop: %v then %v", before, after)
	}
}
