// Rebuild (kgrag.graph.rebuild): create one relationship of type `{{type}}` per row, from the
// node row.source to the node row.target of the new graph (their ids there), with the row's
// properties.
// `{{type}}`: an allow-listed relationship type substituted by kgrag.graph.cypher.render().
// idempotent: no
UNWIND $rows AS row
MATCH (a)
WHERE elementId(a) = row.source
MATCH (b)
WHERE elementId(b) = row.target
CREATE (a)-[r:`{{type}}`]->(b)
SET r = row.props
RETURN count(r) AS created
