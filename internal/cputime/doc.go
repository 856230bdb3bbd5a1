// Package cputime reads the CPU time the process has used. Benchmarks
// report it beside wall time: on a machine shared with a database, wall
// time measures the neighbours too.
package cputime
