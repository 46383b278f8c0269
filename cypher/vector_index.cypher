// The vector index of embeddings of __DIMS__ dimensions (__DIMS__ is the
// configured embedder's dimensions, a validated integer). Embeddings live
// on their own (:MemoryVector) nodes, (m:Memory)-[:HAS_EMBEDDING]->(v), so
// that reading a record never reads (or ships) its vector. Vectors of other
// lengths are stored but not indexed.
CREATE VECTOR INDEX memory_embedding___DIMS__ IF NOT EXISTS FOR (v:MemoryVector) ON v.vector
  OPTIONS {indexConfig: {`vector.dimensions`: __DIMS__, `vector.similarity_function`: 'cosine'}}
