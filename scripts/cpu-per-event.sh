#!/usr/bin/env bash
# Counts the instructions one iteration of a Go benchmark executes, under
# callgrind: a figure of txsink's CPU per event that does not depend on
# the machine's load, unlike a time. It builds PKG's test binary (from
# the working tree, or with -r REV from that commit), runs BENCH under
# valgrind --tool=callgrind for N1 and then N2 iterations
# (-test.benchtime Nx) with GOGC=off GODEBUG=asyncpreemptoff=1
# GOMAXPROCS=1 (no collector, no preemption, one thread: the same work
# each time), and prints the difference of the two totals divided by
# N2-N1, which removes the start-up and the benchmark's set-up.
#
#   scripts/cpu-per-event.sh ./format/ogg 'BenchmarkDecode/small-update$'
#   scripts/cpu-per-event.sh -r de023a4 ./format/ogg 'BenchmarkDecode/small-update$'
#   scripts/cpu-per-event.sh ./reduce 'BenchmarkPipeline/^insert-only/arena$' 20000 60000
#
# -k DIR keeps the two callgrind.out files in DIR, for callgrind_annotate
# (e.g. callgrind_annotate --inclusive=yes DIR/callgrind.out.N2).
# -p PROFILE builds the test binary with go test -pgo=PROFILE (a test
# binary has no profile of its own), to count what the txsink binary's
# profile-guided optimisation gives: -p cmd/txsink/default.pgo.
# Benchmarks that run once per op (b.Loop) give exact counts; a count
# varies by a few instructions per op between runs at most.
set -euo pipefail

usage() {
  echo "usage: $0 [-r REV] [-k DIR] [-p PROFILE] PKG BENCH [N1 [N2]]" >&2
  exit 2
}
rev='' keep='' pgo=off
while getopts r:k:p: o; do
  case $o in
  r) rev=$OPTARG ;;
  k) keep=$OPTARG ;;
  p) pgo=$(cd "$(dirname "$OPTARG")" && pwd)/$(basename "$OPTARG") ;;
  *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || usage
pkg=$1 bench=$2 n1=${3:-5000} n2=${4:-25000}
[ "$n2" -gt "$n1" ] || usage

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=$root
if [ -n "$rev" ]; then
  mkdir "$work/src"
  git -C "$root" archive "$rev" | tar -x -C "$work/src"
  src=$work/src
fi
(cd "$src" && go test -c -pgo="$pgo" -o "$work/test.bin" "$pkg")
out=$work
if [ -n "$keep" ]; then
  mkdir -p "$keep"
  out=$(cd "$keep" && pwd)
fi

# total N: the instructions of a run of N iterations, in the package's
# folder as go test runs it (its testdata).
total() {
  (cd "$src/$pkg" && GOGC=off GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 \
    valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out.$1" \
    "$work/test.bin" -test.run '^$' -test.bench "$bench" -test.benchtime "$1x" -test.count 1) \
    >"$work/stdout.$1" 2>"$work/stderr.$1" || {
    cat "$work/stdout.$1" "$work/stderr.$1" >&2
    exit 1
  }
  if ! grep -q '^ok\|^PASS' "$work/stdout.$1" || ! grep -q '^Benchmark' "$work/stdout.$1"; then
    echo "$0: $bench ran no benchmark in $pkg" >&2
    cat "$work/stdout.$1" >&2
    exit 1
  fi
  awk '/^(summary|totals):/ { print $2; exit }' "$out/callgrind.out.$1"
}
i1=$(total "$n1")
i2=$(total "$n2")
echo "$pkg $bench${rev:+ at $rev}$([ "$pgo" = off ] || echo " with -pgo=$pgo"): $(((i2 - i1) / (n2 - n1))) instructions per op ($n1 and $n2 iterations)"
