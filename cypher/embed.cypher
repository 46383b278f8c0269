// One vector per text of $texts, in order, from the embedding model inside
// Neo4j (the membrane.embed function of tools/neo4j-embed): an empty list
// for a blank text. Read-only; the model runs in the Neo4j process.
RETURN membrane.embed($texts) AS vectors
