// Entities whose name's CLIP text embedding is nearest to a vector (images -> entities), only
// those a readable chunk mentions or a readable image depicts.
CALL db.index.vector.queryNodes('entity_clip', $k, $vector) YIELD node, score
WHERE EXISTS {
  MATCH (node)<-[:MENTIONS|DEPICTS]-(n)-[:PART_OF]->(d:Document)
  WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
}
RETURN node.id AS id, node.name AS name, score
ORDER BY score DESC
