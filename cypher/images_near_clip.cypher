// For each entity name's CLIP text vector, the nearest images of complete documents (links
// earlier images to entities named only now); the caller keeps those above the threshold.
// Neo4j searches with a beam as wide as the count asked for: ask for at least 200 (FalkorDB's
// efRuntime) and keep the best $k, so both engines return the exact neighbours alike.
// idempotent: yes
UNWIND $rows AS row
CALL (row) {
  CALL db.index.vector.queryNodes('image_embedding', CASE WHEN $k > 200 THEN $k ELSE 200 END, row.vector) YIELD node, score
  RETURN node, score ORDER BY score DESC LIMIT $k
}
MATCH (node)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete'
RETURN row.id AS entity_id, node.id AS image_id, score
