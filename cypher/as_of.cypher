// Status, version and salience of m as they were at $asOf. The earliest
// change after $asOf recorded what status, version, salience base and decay
// anchor were before it (audit prevStatus/prevVersion/prevBaseSalience/
// prevAnchor); with no such change they are what they are now. Entries
// written before prevVersion existed give the version from their previous
// JSON when it is not sealed. Salience is then the effective salience at $asOf
// from that base and anchor (decay sweeps write no audit, and need none:
// decay is a function of the base). Used inside CALL (m) {}; the placeholder
// is effective_salience.cypher evaluated on the map h at $asOf.
OPTIONAL MATCH (m)-[:HAS_AUDIT]->(a:AuditEntry)
WHERE $asOf IS NOT NULL AND a.at > $asOf
  AND (a.prevStatus IS NOT NULL OR a.prevSalience IS NOT NULL OR a.prevBaseSalience IS NOT NULL
       OR a.prevVersion IS NOT NULL OR a.previous CONTAINS '"version":')
WITH m, a, coalesce(a.prevVersion, CASE WHEN a.previous STARTS WITH '{' AND a.previous CONTAINS '"version":'
  THEN toInteger(split(split(split(a.previous, '"version":')[1], ',')[0], '}')[0]) END) AS av
ORDER BY a.at, a.id
WITH m, collect(a.prevStatus)[0] AS st, collect(a.prevBaseSalience)[0] AS pb,
     collect(a.prevSalience)[0] AS ps, collect(a.prevAnchor)[0] AS pa, collect(av)[0] AS pv
WITH m, st, pv, m {.*, baseSalience: coalesce(pb, ps, m.baseSalience, m.salience), lastReinforcedAt: coalesce(pa, m.lastReinforcedAt)} AS h
CALL (h) {
  __EFFECTIVE__
}
RETURN m {.*, status: coalesce(st, m.status), version: coalesce(pv, m.version),
          salience: CASE WHEN $asOf IS NULL THEN m.salience ELSE eff END} AS v
