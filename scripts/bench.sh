#!/usr/bin/env bash
# Measures what a user runs: builds cmd/bench, starts a fresh Neo4j (a
# temporary data dir) and the server the README's way (scripts/run.sh, dev
# mode, defaults), runs the bench command from a process of its own
# against it, and stops both. It measures the server's first 1,000 point
# reads (cold), runs every workload once untimed at a small size, then
# measures the workloads warm. Arguments go to that last run, e.g.:
#
#   scripts/bench.sh -records 100000 -ops 500
#
# Environment:
#   BENCH_BOLT_PORT   the fresh Neo4j's Bolt port     [17720]
#   BENCH_LISTEN      the server's address            [127.0.0.1:18080]
#   BENCH_COLD        how many cold point reads       [1000]
#   BENCH_WARM_OPS    operations per workload of the untimed warm-up [100]
#   BENCH_KEEP        1: keep the data dir and logs   [unset]
#   NEO4J_HEAP, NEO4J_PAGECACHE, MEMBRANE_*: as for scripts/run.sh.
# The admin's rate limit is lifted (in dev mode the bench runs as the admin).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bolt="${BENCH_BOLT_PORT:-17720}"
listen="${BENCH_LISTEN:-127.0.0.1:18080}"
work="$(mktemp -d "${TMPDIR:-/tmp}/membrane-bench.XXXXXX")"
server=""

stop() {
  [[ -n "$server" ]] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  NEO4J_HOME_DIR="$work/neo4j" NEO4J_BOLT_PORT="$bolt" scripts/neo4j.sh stop >/dev/null 2>&1 || true
  if [[ -n "${BENCH_KEEP:-}" ]]; then
    echo "bench.sh: kept $work" >&2
  else
    rm -rf "$work"
  fi
}
trap stop EXIT

go build -o "$work/bench" ./cmd/bench

NEO4J_URI= NEO4J_HOME_DIR="$work/neo4j" NEO4J_BOLT_PORT="$bolt" NEO4J_HTTP_PORT=0 \
  MEMBRANE_ADMIN_RATE_LIMIT="${MEMBRANE_ADMIN_RATE_LIMIT:-1000000}" \
  MEMBRANE_ADMIN_RATE_BURST="${MEMBRANE_ADMIN_RATE_BURST:-1000000}" \
  scripts/run.sh -listen "$listen" >"$work/server.log" 2>&1 &
server=$!

# Ready when /readyz answers 200 (the first run also builds Neo4j's
# launcher and plugin with Maven).
for ((i = 0; ; i++)); do
  if curl -fsS -o /dev/null "http://$listen/readyz" 2>/dev/null; then
    break
  fi
  if ! kill -0 "$server" 2>/dev/null || ((i >= 1200)); then
    echo "bench.sh: the server did not become ready; its log:" >&2
    tail -n 40 "$work/server.log" >&2
    exit 1
  fi
  sleep 0.5
done

url="http://$listen/graphql"
rss="server=$server,neo4j=$(cat "$work/neo4j/neo4j.pid")"
# 1. Cold: the server's first point reads.
"$work/bench" -url "$url" -rss "$rss" -cold "${BENCH_COLD:-1000}" -only '^point read, cold$'
# 2. Warm-up, untimed: every workload once at a small size, so that the
#    figures below are those of a server that has run a while. Neo4j's JIT
#    compiles its write paths over thousands of writes: BENCH_WARM_OPS=2000
#    for the figures of a long-running server.
"$work/bench" -url "$url" -cold 0 -ops "${BENCH_WARM_OPS:-100}" -records 2000 >/dev/null 2>&1
# 3. Warm: the workloads as asked.
"$work/bench" -url "$url" -rss "$rss" -cold 0 "$@"
