// The result an idempotency key stored: its request's fingerprint, the ids
// of the records it answered with, in order, and the edges it wrote (JSON;
// null when it wrote none, or when a version before issue 14 stored it).
MATCH (k:IdempotencyKey {key: $key})
RETURN k.fingerprint AS fingerprint, k.resultIds AS resultIds, k.edges AS edges
