// Rebuild (kgrag.graph.rebuild): add label `{{label}}` to the nodes of the new graph whose ids
// are $ids (a node of several labels, e.g. a Chunk that is a Segment, is created with one).
// `{{label}}`: an allow-listed label substituted by kgrag.graph.cypher.render().
// idempotent: yes
UNWIND $ids AS i
MATCH (n)
WHERE elementId(n) = i
SET n:`{{label}}`
RETURN count(n) AS labelled
