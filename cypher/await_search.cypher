// Wait until the eventually consistent full-text index (memory_terms) has
// applied every committed change: for tests and the retrieval eval, which
// search right after writing.
CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh()
