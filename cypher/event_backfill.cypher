// Audit entries written before the change feed existed get the Unsequenced
// label once, so the sequencer numbers them too (oldest first, as the
// sequencer orders each batch). Run before the AuditSequence node exists;
// idempotent.
MATCH (a:AuditEntry)
WHERE a.seq IS NULL AND NOT a:Unsequenced
CALL (a) {
  SET a:Unsequenced
} IN TRANSACTIONS OF 10000 ROWS
