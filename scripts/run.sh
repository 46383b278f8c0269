#!/usr/bin/env bash
# Runs the Membrane server. When NEO4J_URI is unset it first starts (or
# reuses) a local Neo4j with scripts/neo4j.sh (Bolt 127.0.0.1:7687, Browser
# http://127.0.0.1:7474/browser/). Arguments go to the server (see README).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ -z "${NEO4J_URI:-}" ]]; then
  scripts/neo4j.sh start
  export NEO4J_URI="bolt://127.0.0.1:${NEO4J_BOLT_PORT:-7687}"
fi
mkdir -p bin && go build -o bin/membrane .
exec bin/membrane "$@"
