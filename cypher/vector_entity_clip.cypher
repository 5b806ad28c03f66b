// Entities whose name's CLIP text embedding is nearest to a vector (images -> entities), only
// those a readable chunk mentions (a readable picture depicting it does not name it).
// Neo4j searches with a beam as wide as the count asked for: ask for at least 200 (FalkorDB's
// efRuntime). The ACL filter comes before the best $k are kept, so what a reader gets does not
// depend on documents they cannot read (kgrag/executor/nearest.py widens the search when fewer
// than $k of the candidates are readable).
// idempotent: yes
CALL db.index.vector.queryNodes('entity_clip', CASE WHEN $k > 200 THEN $k ELSE 200 END, $vector) YIELD node, score
WITH node, score
WHERE EXISTS {
  MATCH (node)<-[:MENTIONS]-(n)-[:PART_OF]->(d:Document)
  WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
}
RETURN node.id AS id, node.name AS name, score
ORDER BY score DESC
LIMIT $k
