// Take the change-feed sequencer's lock: the write lock on the one
// AuditSequence node, held until the transaction ends, so sequencers of
// several servers run one after the other and each sees the numbers the
// previous one gave out.
MERGE (s:AuditSequence {id: 'audit'})
ON CREATE SET s.last = 0, s:Bookkeeping
SET s.lockedBy = $holder, s.lockedAt = $now
RETURN s.last AS last
