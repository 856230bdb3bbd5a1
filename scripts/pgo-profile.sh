#!/usr/bin/env bash
# Regenerates cmd/txsink/default.pgo, the CPU profile `go build` uses to
# optimise the txsink binary (profile-guided optimisation, on by default
# for a main package with a default.pgo). It runs the bench's workloads
# into MariaDB, PostgreSQL and SQLite with a binary built without the old
# profile, and merges their CPU profiles. Run it after a change that moves
# where txsink spends its time; the servers come up with
# scripts/test-services.sh.
#
#   TXSINK_MYSQL_URL     default mysql://txsink:txsink@127.0.0.1:3306/test
#   TXSINK_POSTGRES_URL  default postgres://postgres@127.0.0.1:5432/test?sslmode=disable
set -euo pipefail
cd "$(dirname "$0")/.."
mysql=${TXSINK_MYSQL_URL:-mysql://txsink:txsink@127.0.0.1:3306/test}
postgres=${TXSINK_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -pgo=off -o "$work/txsink" ./cmd/txsink
n=0
bench() { # bench flags...
  n=$((n + 1))
  echo "pgo-profile: txsink bench $*" >&2
  "$work/txsink" bench --verify=false --cpuprofile "$work/$n.prof" "$@" >/dev/null
}
bench --workload insert-only --orders 200000 --target "$mysql"
bench --workload insert-only --orders 200000 --target "$postgres"
bench --workload update-heavy --orders 20000 --target "$mysql"
bench --workload update-heavy --orders 20000 --target "$postgres"
bench --workload txn --orders 80000 --target "$mysql"
bench --workload insert-only --orders 50000
go tool pprof -proto "$work"/*.prof > cmd/txsink/default.pgo
echo "pgo-profile: wrote cmd/txsink/default.pgo from $n profiles" >&2
