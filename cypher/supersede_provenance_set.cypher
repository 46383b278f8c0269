// Migration audit_refs: the successors' provenance without the old ids.
UNWIND $rows AS row
MATCH (n:Memory {id: row.id})
SET n.provenanceSources = row.sources
RETURN count(*) AS n
