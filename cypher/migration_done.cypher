// Whether the one-time data migration $name has run to the end (done), and
// the key ids it last ran with when it had to skip records it could not
// open (tried; null when it never skipped any).
OPTIONAL MATCH (m:Migration {name: $name})
RETURN m IS NOT NULL AND m.skipped IS NULL AS done, m.triedKeys AS tried
