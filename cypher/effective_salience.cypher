// The effective salience of record m at $now, returned as eff: the Cypher
// twin of internal/membrane.EffectiveSalience (decay.go), which
// TestSweepMatchesEffectiveSalience holds it equal to within 1e-9. It is
// the body of a CALL (m) { } in maintenance statements.
//
// It reads only the state written at the decay anchor (baseSalience,
// lastReinforcedAt) and never the materialised salience, so evaluating it
// twice at one instant gives one value: sweeps cannot compound. Records
// written before baseSalience existed were never swept, so their salience
// is their base. Times are compared as whole seconds plus nanoseconds, so
// nothing overflows and sub-second anchors keep their precision.
WITH m, coalesce(m.baseSalience, m.salience) AS base, toFloat(m.halfLifeSeconds) AS hl,
     coalesce(m.maxAgeSeconds, 0) AS maxAge,
     $now.epochSeconds - m.createdAt.epochSeconds AS ageSeconds,
     $now.nanosecond - m.createdAt.nanosecond AS ageNanos,
     ($now.epochSeconds - m.lastReinforcedAt.epochSeconds)
       + ($now.nanosecond - m.lastReinforcedAt.nanosecond) / 1.0e9 AS sinceAnchor
WITH m, base, hl,
     maxAge > 0 AND (ageSeconds > maxAge OR (ageSeconds = maxAge AND ageNanos >= 0)) AS tooOld,
     CASE WHEN sinceAnchor < 0.0 THEN 0.0 ELSE sinceAnchor END AS e,
     CASE WHEN coalesce(m.minSalience, 0.0) < base THEN coalesce(m.minSalience, 0.0) ELSE base END AS floor
WITH m, base, hl, tooOld, floor,
     CASE
       WHEN hl <= 0.0 THEN base
       WHEN m.decayCurve = 'linear'
         THEN base * CASE WHEN 1.0 - e / (2.0 * hl) < 0.0 THEN 0.0 ELSE 1.0 - e / (2.0 * hl) END
       ELSE base * 2.0 ^ (-e / hl)
     END AS raw
RETURN CASE
  WHEN tooOld THEN 0.0
  WHEN coalesce(m.pinned, false) OR hl <= 0.0 THEN base
  WHEN raw < floor THEN floor
  ELSE raw
END AS eff
