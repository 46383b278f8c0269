// The vector indexes on embeddings ((:MemoryVector).vector), by name, with
// their dimensions. Neo4j keeps at most one index of a kind per label and
// property: CREATE ... IF NOT EXISTS (vector_index) does nothing when one
// of other dimensions exists, so EnsureVectorIndex reads them back.
SHOW VECTOR INDEXES YIELD name, labelsOrTypes, properties, options
WHERE labelsOrTypes = ['MemoryVector'] AND properties = ['vector']
RETURN name, toInteger(options.indexConfig.`vector.dimensions`) AS dims
