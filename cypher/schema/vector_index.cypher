// A vector index on one node property, created when an embedding space is registered.
// `{{name}}`, `{{label}}`, `{{property}}`: allow-listed identifiers substituted by
// kgrag.graph.cypher.render() (Cypher has no parameters for identifiers).
// $dimensions: a positive integer (Neo4j evaluates OPTIONS with the query's parameters).
// The similarity is the literal 'cosine', not a parameter: every vector query in cypher/ turns
// the engine's score into a cosine similarity, so no other function may be chosen here.
CREATE VECTOR INDEX `{{name}}` IF NOT EXISTS
FOR (n:`{{label}}`) ON n.`{{property}}`
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine'}}
