// Superseded records get their own status: those a supersede retired
// before 'superseded' existed (every retracted record with an incoming
// SUPERSEDES edge: a supersede needs a record that is not retracted, and
// nothing revises one after) become 'superseded'. Their audit trail stays
// as written. Migrate runs it once and then records the Migration
// superseded_status; idempotent (a migrated record no longer matches).
MATCH (m:Memory {status: 'retracted'})
WHERE EXISTS { (m)<-[:SUPERSEDES]-(:Memory) }
CALL (m) {
  SET m.status = 'superseded'
} IN TRANSACTIONS OF 1000 ROWS
