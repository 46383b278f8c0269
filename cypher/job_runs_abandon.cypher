// Mark abandoned the runs of leases $keys that recorded no end and that no
// lease names any more: their holder died, and the lease expired or was
// taken over. A run is created after its lease names it and records its
// end before the lease is released, so a run under way is always named.
// Runs recorded before leases named them have no lease key: an unscoped
// one's key is its job. Each run is locked, then checked again, so that an
// end recorded concurrently wins.
MATCH (r:JobRun)
WHERE r.finishedAt IS NULL
  AND coalesce(r.lease, CASE WHEN r.scopes IS NULL THEN r.job END) IN $keys
  AND NOT EXISTS { MATCH (l:JobLease) WHERE l.run = r.id }
SET r._lock = true
REMOVE r._lock
WITH r
WHERE r.finishedAt IS NULL AND NOT EXISTS { MATCH (l:JobLease) WHERE l.run = r.id }
SET r.finishedAt = $now, r.outcome = $outcome, r.error = $error
RETURN count(r) AS abandoned
