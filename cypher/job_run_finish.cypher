// Record how a job run ended, unless another process marked it abandoned
// meanwhile (its holder lost the lease). The run is locked before its
// outcome is read, so a concurrent abandonment is seen, never overwritten.
MATCH (r:JobRun {id: $id})
SET r._lock = true
REMOVE r._lock
WITH r
WHERE r.outcome IS NULL OR r.outcome <> $abandoned
SET r += $props
