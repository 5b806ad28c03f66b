// Rebuild (kgrag.graph.rebuild): as schema/rebuild_nodes_create, with the vector property
// `{{property}}` (row.vector) set as a vector.
// `{{label}}`, `{{property}}`: allow-listed identifiers substituted by
// kgrag.graph.cypher.render().
// idempotent: no
UNWIND $rows AS row
CREATE (n:`{{label}}`)
SET n = row.props, n.`{{property}}` = row.vector
RETURN elementId(n) AS id
