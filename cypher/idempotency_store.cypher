// Remember a mutation's result under its idempotency key: the ids of the
// records it answered with and the edges it wrote ($edges, JSON or null),
// so that a replay answers from them without reading the edges again. A
// concurrent request with the same key fails here on the idempotency_key
// constraint and then replays this result.
CREATE (:IdempotencyKey:Bookkeeping {key: $key, fingerprint: $fingerprint, operation: $operation, resultIds: $resultIds, edges: $edges, createdAt: $now})
