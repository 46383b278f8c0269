// Store search terms computed in Go (migration): only on records still
// older than $version, so that a record rewritten meanwhile keeps the terms
// its write gave it. The old text copy searchText goes with it.
UNWIND $rows AS row
MATCH (m:Memory {id: row.id})
WHERE coalesce(m.searchTermsVersion, 0) < $version
SET m.searchTerms = row.terms, m.searchTermsVersion = $version
REMOVE m.searchText
RETURN count(m) AS n
