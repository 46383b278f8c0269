// Episodic compression (consolidation), the Cypher twin of
// internal/membrane.ConsolidationOptions.CompressedBase: an unpinned
// episodic record whose base is above $floor has its base multiplied by
// $factor once per whole window ($windowNanos) of age not compressed yet,
// never below $floor; compressions counts the windows done, so a second
// run within a window changes nothing. The stored salience is then
// recomputed from the new base (the inner CALL is effective_salience), and
// each compression is audited (action decay): it is bounded, at most a few
// per record, unlike decay sweeps. The first clause matches the records in
// reach; batches of $batch rows commit separately.
__RECORDS__
CALL (m) {
  WITH m
  WHERE m:Episodic AND NOT coalesce(m.pinned, false)
  WITH m, coalesce(m.baseSalience, m.salience) AS base, coalesce(m.compressions, 0) AS done,
       (($now.epochSeconds - m.createdAt.epochSeconds) * 1000000000 + ($now.nanosecond - m.createdAt.nanosecond)) / $windowNanos AS windows
  WHERE base > $floor AND windows > done
  WITH m, base, done, windows, m.salience AS before, base * $factor ^ (windows - done) AS raw
  SET m.baseSalience = CASE WHEN raw < $floor THEN $floor ELSE raw END,
      m.compressions = windows
  WITH m, base, before, windows - done AS times
  CALL (m) {
    __EFFECTIVE__
  }
  SET m.salience = eff
  CREATE (m)-[:HAS_AUDIT]->(:AuditEntry:Unsequenced {
    id: randomUUID(), recordId: m.id, action: 'decay', actor: $actor, at: $now,
    caption: 'decay by ' + $actor + ' at ' + toString(datetime({epochSeconds: $now.epochSeconds})),
    scope: m.scope, sensitivityLevel: m.sensitivityLevel, recordType: m.type,
    rationale: 'episodic compression: salience base x' + toString($factor) + ' for ' + toString(times) + ' window(s) of age',
    prevSalience: before, refRoles: [], refIds: [], refPredicates: [], refLevels: [], refScopes: [],
    previous: '{"salience":' + toString(before) + ',"baseSalience":' + toString(base) + '}'
  })
  RETURN count(*) AS compressed
} IN TRANSACTIONS OF $batch ROWS
RETURN count(*) AS scanned, sum(compressed) AS changed
