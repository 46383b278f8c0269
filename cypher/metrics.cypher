// Metrics over the records a caller may see in full or redacted: at most
// one sensitivity level above its $ceiling, and in its $trustScopes unless $allScopes
// (unscoped records are visible to everyone); and in $only when it is not
// null (a caller's own narrowing, like records' scope filter). Each CALL is one aggregation
// pass; nothing is returned per record. Every count is of what the caller can
// list: what a redacted record hides (its lifecycle's pinned flag, its payload's
// successRate and executionCount, its audit trail) is counted only for records
// seen in full (level <= $ceiling), and audit entries are gated by their own
// copies of scope and sensitivity, as auditLog gates them. successRate exists only on
// competences with performance counts and executionCount only on plans with
// metrics (copied out of the payload), and avg skips nulls, so no label
// test is needed (each cost about 2 s per million records). The histogram buckets are the
// reference's: [0,0.2) [0.2,0.4) [0.4,0.6) [0.6,0.8) [0.8,∞).
CALL () {
  MATCH (m:Memory)
  WHERE m.sensitivityLevel <= $ceiling + 1 AND ($allScopes OR m.scope = '' OR m.scope IN $trustScopes)
    AND ($only IS NULL OR m.scope IN $only)
  RETURN count(m) AS total,
         sum(CASE WHEN m.sensitivityLevel > $ceiling THEN 1 ELSE 0 END) AS redacted,
         sum(CASE WHEN m.salience > 0 THEN 1 ELSE 0 END) AS active,
         sum(CASE WHEN m.pinned AND m.sensitivityLevel <= $ceiling THEN 1 ELSE 0 END) AS pinned,
         sum(CASE WHEN m.createdAt >= $since THEN 1 ELSE 0 END) AS recent,
         coalesce(avg(m.salience), 0.0) AS avgSalience,
         coalesce(avg(m.confidence), 0.0) AS avgConfidence,
         [sum(CASE WHEN m.salience < 0.2 THEN 1 ELSE 0 END),
          sum(CASE WHEN m.salience >= 0.2 AND m.salience < 0.4 THEN 1 ELSE 0 END),
          sum(CASE WHEN m.salience >= 0.4 AND m.salience < 0.6 THEN 1 ELSE 0 END),
          sum(CASE WHEN m.salience >= 0.6 AND m.salience < 0.8 THEN 1 ELSE 0 END),
          sum(CASE WHEN m.salience >= 0.8 THEN 1 ELSE 0 END)] AS histogram,
         coalesce(avg(CASE WHEN m.sensitivityLevel <= $ceiling THEN m.successRate END), 0.0) AS competenceSuccessRate,
         coalesce(avg(CASE WHEN m.sensitivityLevel <= $ceiling THEN toFloat(m.executionCount) END), 0.0) AS planReuseFrequency
}
CALL () {
  MATCH (m:Memory)
  WHERE m.sensitivityLevel <= $ceiling + 1 AND ($allScopes OR m.scope = '' OR m.scope IN $trustScopes)
    AND ($only IS NULL OR m.scope IN $only)
  WITH m.type AS type, m.status AS status, count(*) AS n
  ORDER BY type, status
  RETURN collect({type: type, status: status, count: n}) AS records
}
CALL () {
  MATCH (m:Memory)-[:HAS_AUDIT]->(a:AuditEntry)
  WHERE m.sensitivityLevel <= $ceiling + 1 AND ($allScopes OR m.scope = '' OR m.scope IN $trustScopes)
    AND ($only IS NULL OR m.scope IN $only)
    AND a.sensitivityLevel <= $ceiling AND ($allScopes OR a.scope = '' OR a.scope IN $trustScopes)
  WITH a.action AS action, count(*) AS n
  ORDER BY action
  RETURN collect({action: action, count: n}) AS audits
}
RETURN total, redacted, active, pinned, recent, avgSalience, avgConfidence, histogram,
       competenceSuccessRate, planReuseFrequency, records, audits
