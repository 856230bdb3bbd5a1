package main

import "syscall"

func init() {
	// SIGKILL the child when the thread that started it exits, which for
	// a Go test binary is when the process exits: no goroutine here locks
	// itself to a thread, so the runtime never ends the thread early.
	childAttr = func() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
}
