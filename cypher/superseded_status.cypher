// Superseded records get their own status: those a supersede retired
// before 'superseded' existed (every retracted record with an incoming
// SUPERSEDES edge: a supersede needs a record that is not retracted, and
// nothing revises one after) become 'superseded'. Their audit trail stays
// as written. Migrate runs it once and then records the Migration
// superseded_status; idempotent (a migrated record no longer matches).
// $scopes narrows it to the records of those scopes (null: all), so that a
// test can run it over its own records.
MATCH (m:Memory {status: 'retracted'})
WHERE ($scopes IS NULL OR m.scope IN $scopes) AND EXISTS { (m)<-[:SUPERSEDES]-(:Memory) }
CALL (m) {
  SET m.status = 'superseded'
} IN TRANSACTIONS OF 1000 ROWS
