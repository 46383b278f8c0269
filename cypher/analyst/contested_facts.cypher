// Contested records, with what contests them (records or external evidence).
MATCH (m:Memory {status: 'contested'})
OPTIONAL MATCH (m)-[c:CONTESTED_BY]->(by:Memory)
RETURN m.name AS record, m.type AS type, m.id AS id,
       collect(by.name) AS contestedBy, m.contestEvidence AS externalEvidence, m.updatedAt AS since
ORDER BY since DESC
LIMIT 100
