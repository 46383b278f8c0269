// Status and salience of m as they were at $asOf: the earliest change after
// $asOf recorded what they were before it (audit prevStatus/prevSalience);
// with no such change they are what they are now. Used inside CALL (m) {}.
OPTIONAL MATCH (m)-[:HAS_AUDIT]->(a:AuditEntry)
WHERE $asOf IS NOT NULL AND a.at > $asOf AND (a.prevStatus IS NOT NULL OR a.prevSalience IS NOT NULL)
WITH m, a
ORDER BY a.at, a.id
WITH m, collect(a.prevStatus)[0] AS st, collect(a.prevSalience)[0] AS sal
RETURN m {.*, status: coalesce(st, m.status), salience: coalesce(sal, m.salience)} AS v
