// The candidates of one retrieval (retrieve, and the roots of
// retrieveGraph): records matched by the query, gated, filtered and scored,
// with what ranking needs (internal/membrane.Rank ranks them) and the
// records of the best.
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
// anchor: baseSalience when stored, else salience. As of an instant, it is
// the salience STATE computed for then.
//
// Returns raw (how many matches the index returned before gating: when it
// is $scan, more may exist and the caller may scan further), best (the best
// text score among the candidates, which relevance is relative to) and the
// rows of the best candidates.
__HITS__
WITH hits, size(hits) AS raw
CALL (hits) {
  UNWIND hits AS h
  WITH h[0] AS m, max(h[1]) AS text, max(h[2]) AS vec
  WHERE m.sensitivityLevel <= $ceiling AND ($allScopes OR m.scope = '' OR m.scope IN $trustScopes)
    AND m.type IN $layers AND ($scopes IS NULL OR m.scope IN $scopes)
    AND ($asOf IS NULL OR m.createdAt <= $asOf)
    AND ($tags IS NULL OR all(t IN $tags WHERE t IN m.tags))
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
         // As of an instant, STATE (as_of) already gives the effective
         // salience then: decaying it again would count the time from the
         // anchor twice.
         WHEN $asOf IS NOT NULL THEN v.salience
         WHEN v.maxAgeSeconds > 0 AND $nowMs - v.createdAt.epochMillis >= v.maxAgeSeconds * 1000 THEN 0.0
         WHEN v.pinned OR v.halfLifeSeconds IS NULL OR v.halfLifeSeconds <= 0 THEN base
         WHEN isNaN(decayed) OR decayed < floor THEN floor
         ELSE decayed
       END AS salience
  WHERE salience >= $minSalience
  WITH collect({m: m, v: v, text: text, vec: vec, salience: salience}) AS cs
  WITH cs, reduce(best = 0.0, c IN cs | CASE WHEN c.text > best THEN c.text ELSE best END) AS best
  UNWIND cs AS c
  // The score of internal/membrane.Rank, its weights and constants passed
  // from there, so that the records of the best $limit (and of the best
  // $selectLimit competence and plan_graph candidates, for the selector)
  // come back in this one statement. Rank recomputes the score in Go.
  WITH c, best,
       CASE WHEN best > 0 THEN c.text / best ELSE 0.0 END AS t,
       CASE WHEN c.vec IS NULL THEN null WHEN c.vec < 0 THEN 0.0 WHEN c.vec > 1 THEN 1.0 ELSE c.vec END AS vs
  WITH c, best,
       CASE WHEN vs IS NULL THEN t ELSE (1 - $blend) * t + $blend * vs END AS rel,
       CASE WHEN c.salience > 1 THEN 1.0 WHEN c.salience < 0 THEN 0.0 ELSE c.salience END AS sal,
       CASE WHEN c.m.createdAt.epochMillis >= $nowMs THEN 1.0
            ELSE exp(-($nowMs - c.m.createdAt.epochMillis) * log(2.0) / $recencyHalfLifeMs) END AS rec,
       CASE WHEN c.m.confidence > 1 THEN 1.0 WHEN c.m.confidence < 0 THEN 0.0 ELSE c.m.confidence END AS conf
  WITH c, best, $wRelevance * rel + $wSalience * sal + $wRecency * rec + $wConfidence * conf AS score
  ORDER BY score DESC, $layerRank[c.m.type], c.m.createdAt DESC, c.m.id
  WITH coalesce(max(best), 0.0) AS best, collect(c) AS ranked
  WITH best, ranked,
       [i IN range(0, size(ranked) - 1) WHERE ranked[i].m.type IN ['competence', 'plan_graph']][0..$selectLimit] AS sel
  RETURN best, [i IN range(0, size(ranked) - 1) WHERE i < $limit OR i IN sel | {
    id: ranked[i].m.id, type: ranked[i].m.type, text: ranked[i].text, vec: ranked[i].vec, salience: ranked[i].salience,
    confidence: ranked[i].m.confidence, createdAt: ranked[i].m.createdAt, props: properties(ranked[i].v)
  }] AS rows
}
RETURN raw, best, rows
