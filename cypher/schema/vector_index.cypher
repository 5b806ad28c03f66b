// A vector index on one node property, created when an embedding space is registered.
// `{{name}}`, `{{label}}`, `{{property}}`: allow-listed identifiers substituted by
// kgrag.graph.cypher.render() (Cypher has no parameters for identifiers).
// $dimensions: a positive integer (Neo4j evaluates OPTIONS with the query's parameters).
// The similarity is the literal 'cosine', not a parameter: every vector query in cypher/ turns
// the engine's score into a cosine similarity, so no other function may be chosen here.
// HNSW M 32 and efConstruction 200 as on FalkorDB; quantization (on by default since 5.23) off:
// with it, 300 unit vectors gave 5 of the exact 10 nearest, without it 10 of 10 (BENCHMARKS.md).
// Needs Neo4j 5.23 or later (the quantization setting).
// idempotent: yes
CREATE VECTOR INDEX `{{name}}` IF NOT EXISTS
FOR (n:`{{label}}`) ON n.`{{property}}`
OPTIONS {indexConfig: {
  `vector.dimensions`: $dimensions,
  `vector.similarity_function`: 'cosine',
  `vector.hnsw.m`: 32,
  `vector.hnsw.ef_construction`: 200,
  `vector.quantization.enabled`: false
}}
