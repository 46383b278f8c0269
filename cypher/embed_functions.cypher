// Which of the in-database embedder's functions (tools/neo4j-embed) this
// Neo4j has: a server started with NEO4J_EMBED=off, or the neo4j image
// without the plugin, has neither, and embed_probe would not even plan.
SHOW FUNCTIONS YIELD name
WHERE name IN ['membrane.embed', 'membrane.embedModel']
RETURN collect(name) AS names
