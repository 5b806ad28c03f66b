// Entities whose name's CLIP text embedding is nearest to a vector (images -> entities), only
// those a readable chunk mentions (a readable picture depicting it does not name it).
// Neo4j 2026.01+ SEARCH form of cypher/vector_entity_clip.cypher.
// The search is at least 200 wide; the ACL filter comes before the best $k are kept, as in the
// base statement.
// idempotent: yes
CYPHER 25
MATCH (node:Entity)
  SEARCH node IN (VECTOR INDEX entity_clip FOR $vector LIMIT CASE WHEN $k > 200 THEN $k ELSE 200 END)
  SCORE AS score
WITH node, score
WHERE EXISTS {
  MATCH (node)<-[:MENTIONS]-(n)-[:PART_OF]->(d:Document)
  WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
}
RETURN node.id AS id, node.name AS name, score
ORDER BY score DESC
LIMIT $k
