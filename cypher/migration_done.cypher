// Whether the one-time data migration $name has run.
OPTIONAL MATCH (m:Migration {name: $name})
RETURN m IS NOT NULL AS done
