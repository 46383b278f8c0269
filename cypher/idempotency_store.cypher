// Remember a mutation's result under its idempotency key. A concurrent
// request with the same key fails here on the idempotency_key constraint
// and then replays this result.
CREATE (:IdempotencyKey:Bookkeeping {key: $key, fingerprint: $fingerprint, operation: $operation, resultIds: $resultIds, createdAt: $now})
