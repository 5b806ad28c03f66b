// FalkorDB: unnamed HNSW index; vectors must be written with vecf32(). FalkorDB evaluates
// OPTIONS with the query's parameters: $dimensions, $m, $ef_construction, $ef_runtime are
// positive integers (HNSW settings from kgrag.graph.store). Similarity: the literal 'cosine',
// which the vector queries in cypher/falkordb/ turn into a similarity.
// `{{label}}`, `{{property}}`: allow-listed identifiers substituted by
// kgrag.graph.cypher.render().
// idempotent: yes
CREATE VECTOR INDEX FOR (n:`{{label}}`) ON (n.`{{property}}`)
OPTIONS {dimension: $dimensions, similarityFunction: 'cosine', M: $m,
         efConstruction: $ef_construction, efRuntime: $ef_runtime}
