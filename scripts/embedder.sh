#!/usr/bin/env bash
# An offline embedding service for vector search (tools/embedder): all-MiniLM-L6-v2, 384 dimensions,
# OpenAI-compatible, on 127.0.0.1. Runs in the foreground until stopped.
#
# Usage: scripts/embedder.sh [port]     (default 8089)
# Then configure the server with embedding.endpoint http://127.0.0.1:PORT/v1/embeddings,
# embedding.model all-minilm-l6-v2-q, embedding.dimensions 384 (docs/retrieval.md, "An offline embedder").
# The first run builds it with Maven (about 130 MB from Maven Central into ~/.m2).
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$REPO_ROOT/tools/embedder"
PORT="${1:-8089}"

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
[[ "$PORT" =~ ^[0-9]+$ ]] || { echo "embedder.sh: port must be a number, got $PORT" >&2; exit 2; }
command -v java >/dev/null || { echo "embedder.sh: java (17+) not found" >&2; exit 1; }

classpath="$DIR/target/classpath.txt"
if [[ ! -s "$classpath" || "$DIR/pom.xml" -nt "$classpath" || -n "$(find "$DIR/src" -newer "$classpath" -type f -print -quit)" ]]; then
  command -v mvn >/dev/null || { echo "embedder.sh: mvn not found; needed once to build $DIR" >&2; exit 1; }
  echo "embedder.sh: building $DIR with Maven ..." >&2
  mkdir -p "$DIR/target"
  if ! mvn -B -q -Dstyle.color=never -f "$DIR/pom.xml" package >"$DIR/target/build.log" 2>&1; then
    tail -n 40 "$DIR/target/build.log" >&2
    echo "embedder.sh: maven build failed (log: $DIR/target/build.log)" >&2
    exit 1
  fi
  touch "$classpath"
fi
exec java -cp "$DIR/target/classes:$(cat "$classpath")" membrane.tools.Embedder "$PORT" 127.0.0.1
