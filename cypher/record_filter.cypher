// Trust gate first: invisible records are never matched, nor counted.
m.sensitivityLevel <= $ceiling + 1 AND ($allScopes OR m.scope = '' OR m.scope IN $trustScopes)
// A text filter matches only records seen in full: a redacted record's text
// is not the request's to search (as in retrieve).
AND ($lucene IS NULL OR m.sensitivityLevel <= $ceiling)
AND ($types IS NULL OR m.type IN $types)
AND __SCOPES__
AND ($levels IS NULL OR m.sensitivityLevel IN $levels)
AND ($tags IS NULL OR all(t IN $tags WHERE t IN m.tags))
AND ($createdAfter IS NULL OR m.createdAt >= $createdAfter)
AND ($createdBefore IS NULL OR m.createdAt < $createdBefore)
