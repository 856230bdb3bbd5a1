package cputime

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestTreeCountsChildren runs busy children under this process: Tree(self)
// grows by their CPU time while they run and after they were waited for,
// and a stranger's tree (init's) does not count them.
func TestTreeCountsChildren(t *testing.T) {
	self := os.Getpid()
	before, ok := Tree(self)
	if !ok {
		t.Fatal("Tree: no CPU time for this process")
	}
	// A child that spins for at least 300 ms of CPU, then exits.
	cmd := exec.Command("sh", "-c", `end=$(( $(date +%s) + 1 )); while [ "$(date +%s)" -le "$end" ]; do :; done`)
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start sh: %v", err)
	}
	if p, ok := Parent(cmd.Process.Pid); !ok || p != self {
		t.Errorf("Parent(child) = %d, %v; want %d", p, ok, self)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	after, _ := Tree(self)
	child := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if child < 100*time.Millisecond {
		t.Skipf("the child used only %v of CPU", child)
	}
	// The waited-for child's time is in this process's cutime; allow
	// the 10 ms steps of the figures.
	if grew := after - before; grew < child-20*time.Millisecond {
		t.Errorf("Tree grew by %v over a child that used %v", grew, child)
	}
}

func TestCommandAndFind(t *testing.T) {
	self := os.Getpid()
	name := Command(self)
	if name == "" {
		t.Fatal("Command(self) is empty")
	}
	if pid, ok := Find(name); ok && pid != self {
		// Another process of the same name (a parallel test binary) makes
		// Find ambiguous, never wrong.
		t.Errorf("Find(%q) = %d, want %d or none", name, pid, self)
	}
	if _, ok := Find("no-such-command-txsink"); ok {
		t.Error("Find found a command that does not run")
	}
	if Command(-1) != "" {
		t.Error("Command(-1) is not empty")
	}
	if _, ok := Tree(-1); ok {
		t.Error("Tree(-1) is ok")
	}
}
