// A batch of records at a sealed level (sensitivityLevel >= $level) whose
// payload is stored in clear, after id $after in id order, read under a
// write lock (as lock_records): records a revision raised to a sealed level
// before such revisions rewrote the whole record. The migration seals them
// in Go (seal_repair_set) in the same transaction. $scopes (null: all)
// restricts the pass to those scopes (tests share one database).
MATCH (m:Memory)
WHERE m.sensitivityLevel >= $level AND m.id > $after AND NOT m.payload STARTS WITH 'mbx1:'
  AND ($scopes IS NULL OR m.scope IN $scopes)
WITH m
ORDER BY m.id
LIMIT $limit
SET m._lock = true
REMOVE m._lock
RETURN properties(m) AS m
