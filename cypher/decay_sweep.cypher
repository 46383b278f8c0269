// The decay sweep: materialise every record's effective salience at $now,
// so that salience filters and ordering (indexed) see decayed values.
// The first clause matches the records in reach (records_all or
// records_in_scopes); the inner CALL computes eff (effective_salience). Only records whose
// value moves are written, in batches of $batch rows, each its own
// transaction: one per batch, not one per record. No audit entry is
// written: base and anchor, which are audited, determine every value.
// Returns how many records were scanned and how many changed.
__RECORDS__
CALL (m) {
  CALL (m) {
    __EFFECTIVE__
  }
  WITH m, eff
  WHERE eff <> m.salience
  SET m.salience = eff
  RETURN count(*) AS changed
} IN TRANSACTIONS OF $batch ROWS
RETURN count(*) AS scanned, sum(changed) AS changed
