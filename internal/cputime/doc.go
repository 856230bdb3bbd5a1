// Package cputime reads CPU time: the process's own, and on Linux that of
// another process of the host and its children (Tree), a database server
// running beside txsink. Benchmarks report both beside wall time: on a
// machine shared with a database, wall time measures the neighbours too,
// and the two CPU times show who had the cores.
package cputime
