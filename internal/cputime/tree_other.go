//go:build !linux

package cputime

import "time"

// Tree is not measured on this system (see the Linux version).
func Tree(pid int) (time.Duration, bool) { return 0, false }

// Parent is not known on this system.
func Parent(pid int) (int, bool) { return 0, false }

// Command is not known on this system.
func Command(pid int) string { return "" }

// Find finds nothing on this system.
func Find(names ...string) (int, bool) { return 0, false }
