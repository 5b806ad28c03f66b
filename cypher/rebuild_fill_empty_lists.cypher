// Rebuild of a Neo4j database (kgrag.graph.neo4j_rebuild), after neo4j-admin database import
// (which reads an empty array as no property): the nodes the import marked with
// kgrag_rebuild_id (their old id) get back their empty lists, $fixes[old id] (a map of property
// key to []), and lose the mark.
// idempotent: yes
MATCH (n)
WHERE n.kgrag_rebuild_id IS NOT NULL
WITH n, $fixes[toString(n.kgrag_rebuild_id)] AS lists
SET n += lists
REMOVE n.kgrag_rebuild_id
RETURN count(n) AS filled
