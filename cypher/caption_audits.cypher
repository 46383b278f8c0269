// The caption property of audit entries written before it existed: the
// action, actor (with its detail unless sealed, mbx1:) and time to the second, as written with new entries
// (internal/neo4j, auditCaption), never the text or ids an entry holds.
// Migrate runs it once over every scope ($scopes null) and then records
// the Migration caption_audits_v2; idempotent.
MATCH (a:AuditEntry)
WHERE a.caption IS NULL AND ($scopes IS NULL OR a.scope IN $scopes)
CALL (a) {
  SET a.caption = a.action + ' by ' + coalesce(a.actor, 'unknown')
    + CASE WHEN coalesce(a.actorDetail, '') = '' OR a.actorDetail STARTS WITH 'mbx1:' THEN '' ELSE ' (' + a.actorDetail + ')' END
    + ' at ' + toString(datetime({epochSeconds: a.at.epochSeconds}))
} IN TRANSACTIONS OF 10000 ROWS
