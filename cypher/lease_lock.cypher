// Read job lease $key under a write lock, creating it free on first use.
// MERGE is safe under concurrency thanks to the job_lease_key constraint;
// setting and removing a property holds the node's lock to the end of the
// transaction, so of two processes acquiring at once the second reads what
// the first wrote.
MERGE (l:JobLease {key: $key})
ON CREATE SET l:Bookkeeping
SET l._lock = true
REMOVE l._lock
RETURN properties(l) AS lease
