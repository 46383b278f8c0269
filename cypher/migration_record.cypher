// Records that the one-time data migration $name has run to the end.
MERGE (m:Migration {name: $name})
ON CREATE SET m.at = $now, m:Bookkeeping
ON MATCH SET m.at = CASE WHEN m.skipped IS NULL THEN m.at ELSE $now END
REMOVE m.skipped, m.triedKeys
