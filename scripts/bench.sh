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
#   BENCH_REFERENCE   a checkout of the reference system
#                     (github.com/BennettSchwartz/membrane): measure it
#                     side by side instead (see below)      [unset]
#   BENCH_PASSES      side by side: timed passes of each [2]
#   BENCH_REFERENCE_WARM_OPS  side by side: the reference's untimed
#                     operations per workload (no JIT to warm; its captures
#                     slow as its store grows)              [100]
#   NEO4J_HEAP, NEO4J_PAGECACHE, MEMBRANE_*: as for scripts/run.sh.
# The admin's rate limit is lifted (in dev mode the bench runs as the admin).
#
# With BENCH_REFERENCE it also builds the reference's daemon (membraned,
# cgo for its SQLCipher) and cmd/bench-reference, starts the daemon on a
# fresh SQLite file (no API key, no rate limit), warms this server with
# BENCH_WARM_OPS operations of each workload (the reference with
# BENCH_REFERENCE_WARM_OPS), then runs BENCH_PASSES timed
# passes of the workloads both can run, the reference first in each pass,
# and prints the p50 and throughput of each side and their ratio. Only -ops
# and -only go through, e.g.:
#
#   BENCH_REFERENCE=../membrane-ref BENCH_WARM_OPS=2000 scripts/bench.sh -ops 500
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bolt="${BENCH_BOLT_PORT:-17720}"
listen="${BENCH_LISTEN:-127.0.0.1:18080}"
work="$(mktemp -d "${TMPDIR:-/tmp}/membrane-bench.XXXXXX")"
server=""
reference=""

stop() {
  [[ -n "$server" ]] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  [[ -n "$reference" ]] && kill "$reference" 2>/dev/null && wait "$reference" 2>/dev/null || true
  NEO4J_HOME_DIR="$work/neo4j" NEO4J_BOLT_PORT="$bolt" scripts/neo4j.sh stop >/dev/null 2>&1 || true
  if [[ -n "${BENCH_KEEP:-}" ]]; then
    echo "bench.sh: kept $work" >&2
  else
    rm -rf "$work"
  fi
}
trap stop EXIT

go build -o "$work/bench" ./cmd/bench
if [[ -n "${BENCH_REFERENCE:-}" ]]; then
  ref="$(cd "$BENCH_REFERENCE" && pwd)"
  ln -sfn "$ref" cmd/bench-reference/reference
  CGO_ENABLED=1 go build -C "$ref" -o "$work/membraned" ./cmd/membraned
  go build -C cmd/bench-reference -o "$work/bench-reference" .
  ref_addr="${BENCH_REFERENCE_ADDR:-127.0.0.1:19090}"
  printf 'db_path: %s\nlisten_addr: %s\nrate_limit_per_second: 0\n' "$work/reference.db" "$ref_addr" >"$work/reference.yaml"
  (cd "$work" && exec ./membraned --config reference.yaml) >"$work/reference.log" 2>&1 &
  reference=$!
fi

NEO4J_URI= NEO4J_HOME_DIR="$work/neo4j" NEO4J_BOLT_PORT="$bolt" NEO4J_HTTP_PORT=0 \
  MEMBRANE_ADMIN_RATE_LIMIT="${MEMBRANE_ADMIN_RATE_LIMIT:-1000000}" \
  MEMBRANE_ADMIN_RATE_BURST="${MEMBRANE_ADMIN_RATE_BURST:-1000000}" \
  scripts/run.sh -listen "$listen" >"$work/server.log" 2>&1 &
server=$!

# await NAME PID LOG TRIES CHECK...: waits until CHECK succeeds; fails with
# the end of LOG when PID has exited or after TRIES half seconds.
await() {
  local name=$1 pid=$2 log=$3 tries=$4
  shift 4
  for ((i = 0; ; i++)); do
    if "$@" 2>/dev/null; then
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null || ((i >= tries)); then
      echo "bench.sh: $name did not become ready; its log:" >&2
      tail -n 40 "$log" >&2
      exit 1
    fi
    sleep 0.5
  done
}
listening() { (exec 3<>"/dev/tcp/${1%:*}/${1##*:}"); }

# Ready when /readyz answers 200 (the first run also builds Neo4j's
# launcher and plugin with Maven).
await "the server" "$server" "$work/server.log" 1200 curl -fsS -o /dev/null "http://$listen/readyz"

url="http://$listen/graphql"
if [[ -n "$reference" ]]; then
  await "the reference" "$reference" "$work/reference.log" 120 listening "$ref_addr"
  # Warm-up, untimed, of both; then the timed passes, interleaved. A
  # failed operation does not stop them: the tables count the errors (the
  # reference answers "database is locked" to concurrent revisions).
  "$work/bench-reference" -addr "$ref_addr" -ops "${BENCH_REFERENCE_WARM_OPS:-100}" >/dev/null 2>&1 || true
  "$work/bench" -url "$url" -cold 0 -ops "${BENCH_WARM_OPS:-100}" -records 2000 >/dev/null 2>&1 || true
  both='^(point read|contest|fork|supersede chain|supersede|lineage 100-deep|captureMemory)$'
  for ((pass = 1; pass <= ${BENCH_PASSES:-2}; pass++)); do
    "$work/bench-reference" -addr "$ref_addr" -only "$both" "$@" | tee "$work/reference-$pass.md" || true
    "$work/bench" -url "$url" -cold 0 -only "$both" "$@" | tee "$work/membrane-$pass.md" || true
  done
  echo
  echo "side by side (p50 of the operations that succeeded, failed ones, throughput;"
  echo "ratio = this server's p50 / the reference's)"
  for ((pass = 1; pass <= ${BENCH_PASSES:-2}; pass++)); do
    echo "pass $pass:"
    awk -F'|' 'FNR == NR && /ms \|/ { ref[$2 $3] = $6; err[$2 $3] = $5; rps[$2 $3] = $8; next }
      /ms \|/ && ($2 $3) in ref { r = ref[$2 $3] + 0; m = $6 + 0
        printf "  %-18s c=%-2d reference %8.2f ms %4d failed %10s   membrane %8.2f ms %4d failed %10s   ratio %.2f\n",
          $2, $3, r, err[$2 $3], rps[$2 $3], m, $5, $8, (r > 0 ? m / r : 0) }' \
      "$work/reference-$pass.md" "$work/membrane-$pass.md"
  done
  exit 0
fi
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
