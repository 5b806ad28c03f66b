// Rebuild (kgrag.graph.rebuild): a page of the graph's nodes, ids above $after in id order,
// each with its labels, its properties and the type of each property (a vector is told from a
// list of floats by its type only). Only the embedded FalkorDB store is rebuilt; this Neo4j
// text is the reference of the FalkorDB overlay.
// idempotent: yes
MATCH (n)
WHERE id(n) > $after
WITH n
ORDER BY id(n)
LIMIT $page
RETURN id(n) AS id, labels(n) AS labels, properties(n) AS props,
       [k IN keys(n) | [k, valueType(n[k])]] AS types
