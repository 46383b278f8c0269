// Records that the one-time data migration $name has run.
MERGE (m:Migration {name: $name})
ON CREATE SET m.at = $now
