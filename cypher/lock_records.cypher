// Lock the records $ids and read them, for a write that changes them in
// the same transaction after Go has planned it (a delete, and the last run
// of a revision whose unlocked runs kept meeting changed records): what is
// read here cannot change before the write. The locks are taken in id order so
// two such writes cannot deadlock. Setting and removing a property leaves
// the node unchanged but holds its lock to the end of the transaction.
MATCH (m:Memory)
WHERE m.id IN $ids
WITH m
ORDER BY m.id
SET m._lock = true
REMOVE m._lock
RETURN properties(m) AS m
