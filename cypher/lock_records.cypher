// Read records for a revision under a write lock, taken in id order so two
// revisions over the same records cannot deadlock. Setting and removing a
// property leaves the node unchanged but holds its lock to the end of the
// transaction, so what is read here cannot change before the write: of two
// racing revisions of one record, the second sees the first's result.
MATCH (m:Memory)
WHERE m.id IN $ids
WITH m
ORDER BY m.id
SET m._lock = true
REMOVE m._lock
RETURN properties(m) AS m
