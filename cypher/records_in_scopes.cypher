// The records in $scopes (an index seek on memory_scope): what a
// maintenance pass restricted to scopes reaches, as tests always are.
MATCH (m:Memory)
WHERE m.scope IN $scopes
