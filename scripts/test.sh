#!/usr/bin/env bash
# Runs Membrane's whole test suite against a real Neo4j.
#
# When NEO4J_URI is unset it starts (or reuses) a local Neo4j for tests with
# scripts/neo4j.sh: data in .neo4j/test, Bolt on 127.0.0.1:17687, no HTTP, so
# it never touches the development database. NEO4J_TEST_BOLT_PORT,
# NEO4J_TEST_HOME_DIR, NEO4J_TEST_HEAP and NEO4J_TEST_PAGECACHE change those
# (NEO4J_BOLT_PORT is the development server's). Extra arguments go to go test
# (e.g. scripts/test.sh -run TestIngest ./graph/).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The browser tests (internal/browsertest) drive a real headless Chromium:
# install the Debian package when no browser is found (CI runs as root on a
# fresh machine). MEMBRANE_CHROMIUM names another executable;
# MEMBRANE_BROWSER_TESTS=skip skips those tests and this step.
ensure_chromium() {
  [[ "${MEMBRANE_BROWSER_TESTS:-}" == "skip" || -n "${MEMBRANE_CHROMIUM:-}" ]] && return
  local b
  for b in chromium chromium-browser google-chrome headless-shell; do
    command -v "$b" >/dev/null 2>&1 && return
  done
  if [[ "$(id -u)" -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    echo "Chromium is missing and cannot be installed here (needs root and apt-get): run" >&2
    echo "  sudo apt-get install -y chromium" >&2
    echo "or set MEMBRANE_CHROMIUM to a Chromium executable, or MEMBRANE_BROWSER_TESTS=skip." >&2
    exit 1
  fi
  echo "== installing Chromium (Debian package chromium)"
  local log
  log="$(mktemp)"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    echo "installing Chromium failed" >&2
    exit 1
  fi
  rm -f "$log"
}
ensure_chromium

# The MCP test (e2e/mcp_test.go) also drives an MCP client from another
# ecosystem: the reference TypeScript SDK, pinned by e2e/mcpclient's
# lockfile. Install node and npm (Debian's packages, as root) when missing,
# and the client's packages with npm ci when they are not installed or the
# lockfile changed since. MEMBRANE_MCP_CLIENT_TESTS=skip skips that test
# and this step.
ensure_mcp_client() {
  [[ "${MEMBRANE_MCP_CLIENT_TESTS:-}" == "skip" ]] && return
  local log
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    if [[ "$(id -u)" -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
      echo "node and npm are missing and cannot be installed here (needs root and apt-get): run" >&2
      echo "  sudo apt-get install -y nodejs npm" >&2
      echo "or set MEMBRANE_MCP_CLIENT_TESTS=skip." >&2
      exit 1
    fi
    echo "== installing node and npm (Debian packages nodejs, npm)"
    log="$(mktemp)"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm; } >"$log" 2>&1; then
      cat "$log" >&2
      rm -f "$log"
      echo "installing node failed" >&2
      exit 1
    fi
    rm -f "$log"
  fi
  local dir=e2e/mcpclient
  if [[ ! -f "$dir/node_modules/.package-lock.json" || "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]]; then
    echo "== installing the TypeScript MCP client (npm ci in $dir)"
    log="$(mktemp)"
    if ! (cd "$dir" && npm ci --no-audit --no-fund) >"$log" 2>&1; then
      cat "$log" >&2
      rm -f "$log"
      echo "installing the TypeScript MCP client failed" >&2
      exit 1
    fi
    rm -f "$log"
  fi
}
ensure_mcp_client

if [[ -z "${NEO4J_URI:-}" ]]; then
  export NEO4J_HOME_DIR="${NEO4J_TEST_HOME_DIR:-$PWD/.neo4j/test}"
  export NEO4J_BOLT_PORT="${NEO4J_TEST_BOLT_PORT:-17687}"
  export NEO4J_HTTP_PORT=0
  export NEO4J_HEAP="${NEO4J_TEST_HEAP:-1g}"
  export NEO4J_PAGECACHE="${NEO4J_TEST_PAGECACHE:-512m}"
  scripts/neo4j.sh start
  export NEO4J_URI="bolt://127.0.0.1:${NEO4J_BOLT_PORT}"
  # CI machines keep nothing between runs: stop the server we started.
  if [[ "${CI:-}" == "true" ]]; then stop_neo4j=true; fi
fi

# The retrieval evals (eval/) also run with vectors, from the embedding
# model inside the test Neo4j (scripts/neo4j.sh installs it), as the server
# uses it by default. MEMBRANE_EVAL_EMBEDDER names an OpenAI-compatible
# endpoint (384 dimensions) to use instead.
cleanup() {
  if [[ "${stop_neo4j:-}" == "true" ]]; then scripts/neo4j.sh stop || true; fi
}
trap cleanup EXIT

echo "== gofmt"
unformatted="$(gofmt -l $(git ls-files '*.go') 2>&1 || true)"
if [[ -n "$unformatted" ]]; then echo "gofmt would change:"; echo "$unformatted"; exit 1; fi

echo "== go vet"
go vet ./...

echo "== generated code is up to date"
gen_files=(graph/generated.go graph/models_gen.go graph/*.resolvers.go)
before="$(sha256sum "${gen_files[@]}")"
go generate ./...
after="$(sha256sum "${gen_files[@]}")"
if [[ "$before" != "$after" ]]; then
  echo "go generate changed generated code; run it and commit the result:"
  diff <(echo "$before") <(echo "$after") || true
  exit 1
fi

echo "== go test (Neo4j at $NEO4J_URI)"
if [[ $# -gt 0 ]]; then
  go test -count=1 -timeout 20m "$@"
  exit
fi
# The retrieval evals run first and alone, on the fresh database: BM25's
# document frequencies are the whole full-text index's, so records other
# packages' tests write (and delete) at the same time move the evals'
# figures by a record's place, and a gate on them would then fail by
# chance. Alone, they measure what a fresh Neo4j holding only the fixtures
# gives, run after run.
go test -count=1 -timeout 20m ./eval/
go test -count=1 -timeout 20m -skip '^TestSoak$' $(go list ./... | grep -v '/eval$')
# The soak test runs alone, after the rest: it runs a Neo4j of its own and
# 32 clients for 5 minutes, which would only slow the other packages'
# tests. It asserts what must hold under any load (no acknowledged write
# lost, no 5xx, safe retries, the well-behaved client never refused) and
# only reports latencies.
echo "== soak test (e2e TestSoak), load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
go test -count=1 -timeout 20m -run '^TestSoak$' ./e2e/
# Every benchmark runs once, so that none rots unnoticed (one had failed
# since a status was renamed, as nothing ran it): a smoke run that measures
# nothing. It runs
# last, as its corpora stay in the test database and would move the
# full-text statistics the evals see.
echo "== benchmarks, once each (go test -bench . -benchtime 1x)"
MEMBRANE_BENCH_RECORDS="${MEMBRANE_BENCH_RECORDS:-500}" go test -count=1 -timeout 10m -run '^$' -bench . -benchtime 1x ./...
