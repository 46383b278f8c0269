// Number up to $batch committed audit entries that have no sequence number
// yet, continuing from the counter (read under event_lock in the same
// transaction), oldest first within the batch. An entry only carries the
// Unsequenced label once its own transaction has committed, so numbers
// follow commit order: a subscriber that has read every entry up to n
// never sees a later entry appear below n.
MATCH (s:AuditSequence {id: 'audit'})
CALL () {
  MATCH (a:Unsequenced)
  RETURN a LIMIT $batch
}
WITH s, a ORDER BY a.at, a.id
WITH s, collect(a) AS batch
UNWIND range(0, size(batch) - 1) AS i
WITH s, batch[i] AS a, s.last + 1 + i AS seq
SET a.seq = seq
REMOVE a:Unsequenced
WITH s, max(seq) AS last, count(*) AS n
SET s.last = last
RETURN n, last
