// A first look at the graph without the bookkeeping nodes (label
// Bookkeeping: locks, leases, job runs, migrations, idempotency keys,
// deleted ids, key checks, embeddings; docs/data-model.md): records,
// audit entries and plan steps. Browser draws the edges between them.
MATCH (n)
WHERE NOT n:Bookkeeping
RETURN n
LIMIT 100
