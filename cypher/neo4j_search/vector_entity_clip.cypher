// Entities whose name's CLIP text embedding is nearest to a vector (images -> entities), only
// those a readable chunk mentions or a readable image depicts.
// Neo4j 2026.01+ SEARCH form of cypher/vector_entity_clip.cypher.
CYPHER 25
MATCH (node:Entity)
  SEARCH node IN (VECTOR INDEX entity_clip FOR $vector LIMIT $k) SCORE AS score
WITH node, score
WHERE EXISTS {
  MATCH (node)<-[:MENTIONS|DEPICTS]-(n)-[:PART_OF]->(d:Document)
  WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
}
RETURN node.id AS id, node.name AS name, score
ORDER BY score DESC
