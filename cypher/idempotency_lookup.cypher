MATCH (k:IdempotencyKey {key: $key})
RETURN k.fingerprint AS fingerprint, k.resultIds AS resultIds
