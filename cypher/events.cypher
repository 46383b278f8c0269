// Change-feed events: audit entries numbered after $after and at most
// $upTo, in commit order, matching the subscription's filter. Trust gate:
// as audit_page, on the scope and sensitivity copied into each entry, plus
// $redacted levels above the ceiling (recordChanged shows a record one
// level above as redacted; auditAppended shows only entries of records
// seen in full). The record's current state comes along when it still
// exists.
MATCH (a:AuditEntry)
WHERE a.seq > $after AND a.seq <= $upTo
  AND a.sensitivityLevel <= $ceiling + $redacted AND ($allScopes OR a.scope = '' OR a.scope IN $trustScopes)
  AND ($ids IS NULL OR a.recordId IN $ids)
  AND ($types IS NULL OR a.recordType IN $types)
  AND ($scopes IS NULL OR a.scope IN $scopes)
  AND ($actions IS NULL OR a.action IN $actions)
  AND ($actors IS NULL OR a.actor IN $actors)
WITH a ORDER BY a.seq LIMIT $limit
OPTIONAL MATCH (m:Memory {id: a.recordId})
WHERE $withRecords
RETURN properties(a) AS audit, CASE WHEN m IS NULL THEN null ELSE properties(m) END AS record
ORDER BY a.seq
