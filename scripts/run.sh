#!/usr/bin/env bash
# Runs the Membrane server. When NEO4J_URI is unset it first starts (or
# reuses) a local Neo4j with scripts/neo4j.sh (Bolt 127.0.0.1:7687, Browser
# http://127.0.0.1:7474/browser/). Arguments go to the server (see README).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Help needs neither Neo4j nor a build step: answer it before starting either.
case "${1:-}" in
  -h|--help|help)
    cat <<'USAGE'
Usage: scripts/run.sh [server flags]   (e.g. scripts/run.sh -listen 127.0.0.1:8080)

Builds bin/membrane and runs the server. With NEO4J_URI unset it first starts
(or reuses) a local Neo4j (Bolt 127.0.0.1:7687, Browser http://127.0.0.1:7474/browser/)
and creates a development encryption key in .neo4j/. Server flags, subcommands and
settings: bin/membrane -h and the README's configuration table.
USAGE
    exit 0 ;;
esac

if [[ -z "${NEO4J_URI:-}" ]]; then
  scripts/neo4j.sh start
  export NEO4J_URI="bolt://127.0.0.1:${NEO4J_BOLT_PORT:-7687}"
fi
# A local development encryption key (kept in the git-ignored .neo4j/), so
# sensitive records work out of the box; production sets its own.
if [[ -z "${MEMBRANE_ENCRYPTION_KEY:-}" ]]; then
  mkdir -p .neo4j
  [[ -s .neo4j/dev-encryption.key ]] || (umask 077; head -c 32 /dev/urandom | base64 > .neo4j/dev-encryption.key)
  export MEMBRANE_ENCRYPTION_KEY="dev:$(cat .neo4j/dev-encryption.key)"
fi
mkdir -p bin && go build -o bin/membrane .
exec bin/membrane "$@"
