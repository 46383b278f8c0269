// The candidates of one retrieval (retrieve, and the roots of
// retrieveGraph): records matched by the query or reached from the best
// matches through the graph, gated, filtered and scored, with what ranking
// needs (internal/membrane.Rank ranks them) and the records of the best.
//
// The HITS placeholder (a fixed fragment, retrieve_hits_*.cypher) binds
// hits to [node, text score, cosine or null] rows: the
// full-text matches of $lucene (the best $scan), plus the best $scan vector
// matches when there is a query vector, or without a query the $scan
// newest records. Only records seen in full are candidates: a redacted
// record's text is not the caller's to search. The STATE placeholder binds
// v, the record as it is or (asOf) as it was at $asOf.
//
// Graph signals (docs/retrieval.md): the best $seeds matches the caller
// sees in full (trust, scopes, asOf, status: not layers, so an entity that
// matches still lifts the episodes that mention it when only episodes are
// asked for), by their seed score (internal/membrane.SeedScore: text and
// vector fused with the fusion weights), each pass that score t (relative
// to the best seed's, in [0,1]) to
//   - context: their session neighbours (NEXT, either way: t one hop away,
//     $secondHop·t two hops away through a neighbour seen in full, times
//     $contextAfter for a record after the seed and $contextBefore for one
//     before it; summed over the seeds and divided by $contextNorm:
//     internal/membrane.ContextScore),
//   - entity: $entityFanIn·t to the records that MENTION or are ABOUT them
//     (when the seed is an entity, often a hub of its topic; at most
//     $fanout records per entity), and t to the entities they MENTION or
//     are ABOUT (the person a matching fact is about; at most $fanout per
//     seed),
//   - derived: the records DERIVED_FROM them and those they derive from
//     (at most $fanout per seed).
// Each record keeps the best of each signal. The records reached join the
// hits and go through the same gate as they do: a record the caller does
// not see in full neither passes a signal (it is no seed) nor is returned.
// The $fanout records an entity or a seed reaches are chosen after that
// gate, the filters and the status test (retracted records are no hits
// unless asked for), never before: otherwise records the caller cannot see,
// or that cannot be returned, would take the places of those that can, and
// its hits and scores would depend on them. They are the newest $fanout
// (ties by id) among the first $fanoutScan records that pass, in the order
// the store reads the seed's links: a sort needs every row before it, and
// a hub entity has thousands of links (reading them all made a query naming
// one several times slower), so for a seed with more than $fanoutScan such
// records, which $fanoutScan is the store's order.
//
// Effective salience is internal/membrane.EffectiveSalience at $nowMs (the
// ranking instant, epoch milliseconds), from the salience at the decay
// anchor: baseSalience when stored, else salience. As of an instant, it is
// the salience STATE computed for then.
//
// Returns raw (how many matches the index returned before gating: when it
// is $scan, more may exist and the caller may scan further), best (the best
// text score among the candidates, which text is relative to), fused (the
// best fused score, which relevance is relative to) and the rows of the
// best candidates.
__HITS__
WITH hits, size(hits) AS raw
CALL (hits) {
  UNWIND hits AS h
  WITH h[0] AS x, h[1] AS text, CASE WHEN h[2] IS NULL OR h[2] < 0 THEN 0.0 WHEN h[2] > 1 THEN 1.0 ELSE h[2] END AS vs
  WHERE (text > 0 OR vs > 0) AND x.sensitivityLevel <= $ceiling AND ($allScopes OR x.scope = '' OR x.scope IN $trustScopes)
    AND ($scopes IS NULL OR x.scope IN $scopes) AND ($asOf IS NULL OR x.createdAt <= $asOf)
    AND ($includeRetracted OR NOT x.status IN ['retracted', 'superseded'])
  WITH collect([x, text, vs]) AS gs, max(text) AS mt
  UNWIND gs AS g
  // internal/membrane.SeedScore
  WITH g[0] AS x, ($fText * CASE WHEN mt > 0 THEN g[1] / mt ELSE 0.0 END + $fVector * g[2]) / ($fText + $fVector) AS s
  ORDER BY s DESC, x.id
  LIMIT $seeds
  RETURN collect([x, s]) AS seeds, max(s) AS seedBest
}
CALL (seeds, seedBest) {
  UNWIND seeds AS s
  WITH s[0] AS x, s[1] / seedBest AS t
  CALL (x, t) {
    // The session neighbours: the seed's links read once, either way
    // (four directed patterns read them four times), then each
    // neighbour's own, onwards in the same direction.
    MATCH (x)-[r:NEXT]-(y:Memory)
    WITH y, t, startNode(r) = x AS after
    CALL (y, t, after) {
      RETURN y AS n, CASE WHEN after THEN $contextAfter ELSE $contextBefore END * t AS ctx
      UNION ALL
      WITH y, t, after
      WHERE y.sensitivityLevel <= $ceiling AND ($allScopes OR y.scope = '' OR y.scope IN $trustScopes)
        AND ($asOf IS NULL OR y.createdAt <= $asOf)
      MATCH (y)-[r2:NEXT]-(n:Memory)
      WHERE (startNode(r2) = y) = after
      RETURN n, CASE WHEN after THEN $contextAfter ELSE $contextBefore END * $secondHop * t AS ctx
    }
    RETURN n, ctx, 0.0 AS ent, 0.0 AS der
    UNION ALL
    MATCH (x:Entity)<-[:MENTIONS|ABOUT]-(n:Memory)
    WHERE n.sensitivityLevel <= $ceiling AND ($allScopes OR n.scope = '' OR n.scope IN $trustScopes)
      AND n.type IN $layers AND ($scopes IS NULL OR n.scope IN $scopes)
      AND ($asOf IS NULL OR n.createdAt <= $asOf)
      AND ($tags IS NULL OR all(g IN $tags WHERE g IN n.tags))
      AND ($includeRetracted OR NOT n.status IN ['retracted', 'superseded'])
    WITH n, t
    LIMIT $fanoutScan
    WITH n, t
    ORDER BY n.createdAt DESC, n.id
    LIMIT $fanout
    RETURN n, 0.0 AS ctx, $entityFanIn * t AS ent, 0.0 AS der
    UNION ALL
    MATCH (x)-[:MENTIONS|ABOUT]->(n:Entity)
    WHERE n.sensitivityLevel <= $ceiling AND ($allScopes OR n.scope = '' OR n.scope IN $trustScopes)
      AND n.type IN $layers AND ($scopes IS NULL OR n.scope IN $scopes)
      AND ($asOf IS NULL OR n.createdAt <= $asOf)
      AND ($tags IS NULL OR all(g IN $tags WHERE g IN n.tags))
      AND ($includeRetracted OR NOT n.status IN ['retracted', 'superseded'])
    WITH n, t
    LIMIT $fanoutScan
    WITH n, t
    ORDER BY n.createdAt DESC, n.id
    LIMIT $fanout
    RETURN n, 0.0 AS ctx, t AS ent, 0.0 AS der
    UNION ALL
    MATCH (x)-[:DERIVED_FROM]-(n:Memory)
    WHERE n.sensitivityLevel <= $ceiling AND ($allScopes OR n.scope = '' OR n.scope IN $trustScopes)
      AND n.type IN $layers AND ($scopes IS NULL OR n.scope IN $scopes)
      AND ($asOf IS NULL OR n.createdAt <= $asOf)
      AND ($tags IS NULL OR all(g IN $tags WHERE g IN n.tags))
      AND ($includeRetracted OR NOT n.status IN ['retracted', 'superseded'])
    WITH n, t
    LIMIT $fanoutScan
    WITH n, t
    ORDER BY n.createdAt DESC, n.id
    LIMIT $fanout
    RETURN n, 0.0 AS ctx, 0.0 AS ent, t AS der
  }
  WITH n, sum(ctx) / $contextNorm AS ctx, max(ent) AS ent, max(der) AS der
  RETURN collect([n, 0.0, null, CASE WHEN ctx > 1 THEN 1.0 ELSE ctx END, ent, der]) AS reached
}
CALL (hits, reached) {
  UNWIND hits + reached AS h
  WITH h[0] AS m, max(h[1]) AS text, max(h[2]) AS vec,
       max(coalesce(h[3], 0.0)) AS ctx, max(coalesce(h[4], 0.0)) AS ent, max(coalesce(h[5], 0.0)) AS der
  WHERE m.sensitivityLevel <= $ceiling AND ($allScopes OR m.scope = '' OR m.scope IN $trustScopes)
    AND m.type IN $layers AND ($scopes IS NULL OR m.scope IN $scopes)
    AND ($asOf IS NULL OR m.createdAt <= $asOf)
    AND ($tags IS NULL OR all(t IN $tags WHERE t IN m.tags))
  __STATE__
  WITH m, v, text, vec, [ctx, ent, der] AS graph, v.status AS status
  WHERE $includeRetracted OR NOT status IN ['retracted', 'superseded']
  // Every property that ranking reads, read once: a read walks the node's
  // property chain, and a mention in a later clause, or after collect,
  // reads it again. The creation time is the record's whatever the
  // instant (it never changes).
  WITH m, v, text, vec, graph, v.baseSalience AS baseSalience, v.salience AS stored,
       v.lastReinforcedAt AS anchor, v.minSalience AS minSalience, v.halfLifeSeconds AS halfLife,
       v.decayCurve AS curve, v.maxAgeSeconds AS maxAge, v.pinned AS pinned,
       m.id AS id, m.type AS type, m.createdAt AS createdAt, m.confidence AS confidence,
       coalesce(m.sessionAt, m.createdAt) AS at
  WITH v, text, vec, graph, stored, minSalience, halfLife, curve, maxAge, pinned, id, type, createdAt, confidence, at,
       coalesce(baseSalience, stored) AS base,
       CASE WHEN $nowMs > anchor.epochMillis
            THEN ($nowMs - anchor.epochMillis) / 1000.0 ELSE 0.0 END AS elapsed
  WITH v, text, vec, graph, stored, halfLife, maxAge, pinned, id, type, createdAt, confidence, at, base,
       CASE WHEN minSalience < base THEN minSalience ELSE base END AS floor,
       CASE
         WHEN halfLife IS NULL OR halfLife <= 0 THEN base
         WHEN curve = 'linear'
           THEN base * CASE WHEN elapsed < 2.0 * halfLife THEN 1.0 - elapsed / (2.0 * halfLife) ELSE 0.0 END
         ELSE base * exp(-elapsed * log(2.0) / halfLife)
       END AS decayed
  WITH v, text, vec, graph, id, type, createdAt, confidence, at,
       CASE
         // As of an instant, STATE (as_of) already gives the effective
         // salience then: decaying it again would count the time from the
         // anchor twice.
         WHEN $asOf IS NOT NULL THEN stored
         WHEN maxAge > 0 AND $nowMs - createdAt.epochMillis >= maxAge * 1000 THEN 0.0
         WHEN pinned OR halfLife IS NULL OR halfLife <= 0 THEN base
         WHEN isNaN(decayed) OR decayed < floor THEN floor
         ELSE decayed
       END AS salience
  WHERE salience >= $minSalience
  WITH collect({v: v, text: text, vec: vec, salience: salience, graph: graph,
                id: id, type: type, createdAt: createdAt, confidence: confidence, at: at}) AS cs
  WITH cs, reduce(best = 0.0, c IN cs | CASE WHEN c.text > best THEN c.text ELSE best END) AS best
  UNWIND cs AS c
  // The score of internal/membrane.Rank, its weights and constants passed
  // from there, so that the records of the best $limit (twice the
  // retrieval's limit, room for session diversity) and of the best
  // $selectLimit competence and plan_graph candidates (for the selector)
  // come back in this one statement. Rank recomputes the score in Go.
  WITH c, best,
       CASE WHEN best > 0 THEN c.text / best ELSE 0.0 END AS t,
       CASE WHEN c.vec IS NULL THEN 0.0 WHEN c.vec < 0 THEN 0.0 WHEN c.vec > 1 THEN 1.0 ELSE c.vec END AS vs,
       // internal/membrane.TimeScore: 1 inside the query's time window,
       // halving with every width outside it; 0 without one.
       CASE WHEN $timeFrom IS NULL THEN 0.0
            WHEN c.at.epochMillis < $timeFrom THEN exp(-($timeFrom - c.at.epochMillis) * log(2.0) / $timeWidthMs)
            WHEN c.at.epochMillis >= $timeTo THEN exp(-(c.at.epochMillis - $timeTo) * log(2.0) / $timeWidthMs)
            ELSE 1.0 END AS ts
  WITH c, best,
       ($fText * t + $fVector * vs + $fContext * c.graph[0] + $fEntity * c.graph[1] + $fDerived * c.graph[2] + $fTime * ts) / $fTotal AS fused
  WITH max(best) AS best, collect({c: c, fused: fused}) AS fs
  WITH best, fs, reduce(top = 0.0, f IN fs | CASE WHEN f.fused > top THEN f.fused ELSE top END) AS top
  UNWIND fs AS f
  WITH f.c AS c, best, top,
       // At least $entityFloor of the entity signal (membrane.EntityFloor).
       CASE WHEN top <= 0 THEN 0.0
            WHEN f.fused / top < $entityFloor * f.c.graph[1] THEN $entityFloor * f.c.graph[1]
            ELSE f.fused / top END AS rel,
       CASE WHEN f.c.salience > 1 THEN 1.0 WHEN f.c.salience < 0 THEN 0.0 ELSE f.c.salience END AS sal,
       CASE WHEN f.c.createdAt.epochMillis >= $nowMs THEN 1.0
            ELSE exp(-($nowMs - f.c.createdAt.epochMillis) * log(2.0) / $recencyHalfLifeMs) END AS rec,
       CASE WHEN f.c.confidence > 1 THEN 1.0 WHEN f.c.confidence < 0 THEN 0.0 ELSE f.c.confidence END AS conf
  WITH c, best, top, $wRelevance * rel + $wSalience * sal + $wRecency * rec + $wConfidence * conf AS score
  ORDER BY score DESC, $layerRank[c.type], c.createdAt DESC, c.id
  WITH coalesce(max(best), 0.0) AS best, coalesce(max(top), 0.0) AS top, collect(c) AS ranked
  WITH best, top, ranked,
       [i IN range(0, size(ranked) - 1) WHERE ranked[i].type IN ['competence', 'plan_graph']][0..$selectLimit] AS sel
  RETURN best, top, [i IN range(0, size(ranked) - 1) WHERE i < $limit OR i IN sel | {
    id: ranked[i].id, type: ranked[i].type, text: ranked[i].text, vec: ranked[i].vec, salience: ranked[i].salience,
    confidence: ranked[i].confidence, createdAt: ranked[i].createdAt, at: ranked[i].at, props: properties(ranked[i].v),
    context: ranked[i].graph[0], entity: ranked[i].graph[1], derived: ranked[i].graph[2]
  }] AS rows
}
RETURN raw, best, top, rows
