// Declare relationship type `{{type}}` in the schema before any write uses it (migration op
// RelationshipTypes; FalkorDB only): one relationship of it between two new nodes, all deleted
// again. The type stays in the schema. FalkorDB creates a type with its first relationship, and
// two writers that MERGE a relationship of a type that does not exist yet may both create it.
// `{{type}}`: an allow-listed relationship type substituted by kgrag.graph.cypher.render().
// idempotent: yes
CREATE (a)-[:`{{type}}`]->(b)
DETACH DELETE a, b
