// Serialise captures that create entities of the same names in the same
// scope: each takes the write locks of the lock buckets of its new names
// (a hash of scope and name, at most 4096 EntityLock nodes, created on
// first use under the entity_lock_bucket constraint) in ascending order,
// then looks its entities up again. A second capture creating the same
// entity waits for the first to commit and then finds its entity.
UNWIND $buckets AS b
MERGE (l:EntityLock {bucket: b})
SET l._lock = true
REMOVE l._lock
RETURN count(l) AS locked
