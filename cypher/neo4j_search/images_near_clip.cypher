// For each entity name's CLIP text vector, the nearest images of complete documents (links
// earlier images to entities named only now); the caller keeps those above the threshold.
// Neo4j 2026.01+ SEARCH form of cypher/images_near_clip.cypher: one search per row.
// The search is at least 200 wide and the best $k are kept, as in the base statement.
// idempotent: yes
CYPHER 25
UNWIND $rows AS row
CALL (row) {
  MATCH (node:Image)
    SEARCH node IN (VECTOR INDEX image_embedding FOR row.vector LIMIT CASE WHEN $k > 200 THEN $k ELSE 200 END)
    SCORE AS score
  RETURN node, score ORDER BY score DESC LIMIT $k
}
MATCH (node)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete'
RETURN row.id AS entity_id, node.id AS image_id, score
