// Read the records of a revision in one round trip: $ids under a write
// lock, and $read (records it reads but does not change; they may be
// missing) without one. The locks are taken in id order so two revisions
// over the same records cannot deadlock. Setting and removing a property
// leaves the node unchanged but holds its lock to the end of the
// transaction, so what is read here cannot change before the write: of two
// racing revisions of one record, the second sees the first's result.
// locked says which of the two lists a row answers.
CALL () {
  MATCH (m:Memory)
  WHERE m.id IN $ids
  WITH m
  ORDER BY m.id
  SET m._lock = true
  REMOVE m._lock
  RETURN m, true AS locked
  UNION ALL
  MATCH (m:Memory)
  WHERE m.id IN $read
  RETURN m, false AS locked
}
RETURN properties(m) AS m, locked
