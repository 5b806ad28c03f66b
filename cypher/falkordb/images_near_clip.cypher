// FalkorDB: vecf32 and cosine distance in [0, 2] -> similarity (1 + cos) / 2 in [0, 1], as Neo4j.
// idempotent: yes
UNWIND $rows AS row
CALL db.idx.vector.queryNodes('Image', 'embedding', $k, vecf32(row.vector)) YIELD node, score
MATCH (node)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete'
RETURN row.id AS entity_id, node.id AS image_id, 1.0 - score / 2.0 AS score
