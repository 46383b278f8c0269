// Forget idempotency keys stored before $cutoff (the prune job, with
// jobs.idempotency_retention): a retry is safe within the retention, and
// the keys, one per keyed mutation and one per create with client-chosen
// ids, do not pile up for ever. In batches of $batch keys per transaction.
MATCH (k:IdempotencyKey) WHERE k.createdAt < $cutoff
CALL (k) {
  DELETE k
} IN TRANSACTIONS OF $batch ROWS
RETURN count(k) AS expired
