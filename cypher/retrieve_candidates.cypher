// The candidates of one retrieval (retrieve, and the roots of
// retrieveGraph): records matched by the query, gated, filtered and capped
// per layer, with what ranking needs (internal/membrane.Rank ranks them).
//
// The HITS placeholder (a fixed fragment, retrieve_hits_*.cypher) binds
// hits to [node, text score, cosine or null] rows: the
// full-text matches of $lucene (the best $scan), plus the best $scan vector
// matches when there is a query vector, or without a query the $scan
// newest records. Only records seen in full are candidates: a redacted
// record's text is not the caller's to search. The STATE placeholder binds
// v, the record as it is or (asOf) as it was at $asOf.
//
// Effective salience is internal/membrane.EffectiveSalience at $nowMs (the
// ranking instant, epoch milliseconds), from the salience at the decay
// anchor: baseSalience when stored, else salience.
//
// Returns raw (how many matches the index returned before gating: when it
// is $scan, more may exist and the caller may scan further) and the rows.
__HITS__
WITH hits, size(hits) AS raw
CALL (hits) {
  UNWIND hits AS h
  WITH h[0] AS m, max(h[1]) AS text, max(h[2]) AS vec
  WHERE m.sensitivityLevel <= $ceiling AND ($allScopes OR m.scope = '' OR m.scope IN $trustScopes)
    AND m.type IN $layers AND ($scopes IS NULL OR m.scope IN $scopes)
    AND ($asOf IS NULL OR m.createdAt <= $asOf)
  __STATE__
  WITH m, v, text, vec
  WHERE $includeRetracted OR v.status <> 'retracted'
  WITH m, v, text, vec, coalesce(v.baseSalience, v.salience) AS base,
       CASE WHEN $nowMs > v.lastReinforcedAt.epochMillis
            THEN ($nowMs - v.lastReinforcedAt.epochMillis) / 1000.0 ELSE 0.0 END AS elapsed
  WITH m, v, text, vec, base,
       CASE WHEN v.minSalience < base THEN v.minSalience ELSE base END AS floor,
       CASE
         WHEN v.halfLifeSeconds IS NULL OR v.halfLifeSeconds <= 0 THEN base
         WHEN v.decayCurve = 'linear'
           THEN base * CASE WHEN elapsed < 2.0 * v.halfLifeSeconds THEN 1.0 - elapsed / (2.0 * v.halfLifeSeconds) ELSE 0.0 END
         ELSE base * exp(-elapsed * log(2.0) / v.halfLifeSeconds)
       END AS decayed
  WITH m, v, text, vec,
       CASE
         WHEN v.maxAgeSeconds > 0 AND $nowMs - v.createdAt.epochMillis >= v.maxAgeSeconds * 1000 THEN 0.0
         WHEN v.pinned OR v.halfLifeSeconds IS NULL OR v.halfLifeSeconds <= 0 THEN base
         WHEN isNaN(decayed) OR decayed < floor THEN floor
         ELSE decayed
       END AS salience
  WHERE salience >= $minSalience
  WITH collect({m: m, v: v, text: text, vec: vec, salience: salience}) AS cs
  // Per layer, keep the best $perLayer by text score relative to the best
  // one plus vector similarity (or, without a query, the newest).
  WITH cs, reduce(best = 0.0, c IN cs | CASE WHEN c.text > best THEN c.text ELSE best END) AS best
  UNWIND cs AS c
  WITH c, CASE WHEN $browse THEN c.m.createdAt.epochMillis
               ELSE CASE WHEN best > 0 THEN c.text / best ELSE 0.0 END + coalesce(c.vec, 0.0) END AS key
  ORDER BY key DESC, c.m.id
  WITH c.m.type AS layer, collect(c)[0..$perLayer] AS top
  UNWIND top AS c
  RETURN collect({
    id: c.m.id, type: c.m.type, text: c.text, vec: c.vec, salience: c.salience,
    confidence: c.m.confidence, createdAt: c.m.createdAt,
    // Selection candidates carry their record.
    props: CASE WHEN c.m.type IN ['competence', 'plan_graph'] THEN properties(c.v) END
  }) AS rows
}
RETURN raw, rows
