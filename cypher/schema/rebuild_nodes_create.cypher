// Rebuild (kgrag.graph.rebuild): create one node of label `{{label}}` per row with the row's
// properties, in the new graph; their new ids, in the order of the rows.
// `{{label}}`: an allow-listed label substituted by kgrag.graph.cypher.render().
// idempotent: no
UNWIND $rows AS row
CREATE (n:`{{label}}`)
SET n = row.props
RETURN elementId(n) AS id
