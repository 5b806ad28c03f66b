// FalkorDB: vecf32 and cosine distance in [0, 2] -> similarity (1 + cos) / 2 in [0, 1], as Neo4j;
// only entities a readable chunk mentions.
// idempotent: yes
CALL db.idx.vector.queryNodes('Entity', 'clip_embedding', CASE WHEN $k > 200 THEN $k ELSE 200 END, vecf32($vector)) YIELD node, score
MATCH (node)<-[:MENTIONS]-(n)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
WITH DISTINCT node, score
RETURN node.id AS id, node.name AS name, 1.0 - score / 2.0 AS score
ORDER BY score DESC
LIMIT $k
