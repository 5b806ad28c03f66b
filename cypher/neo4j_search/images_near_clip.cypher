// For each entity name's CLIP text vector, the nearest images of complete documents (links
// earlier images to entities named only now); the caller keeps those above the threshold.
// Neo4j 2026.01+ SEARCH form of cypher/images_near_clip.cypher: one search per row.
CYPHER 25
UNWIND $rows AS row
MATCH (node:Image)
  SEARCH node IN (VECTOR INDEX image_embedding FOR row.vector LIMIT $k) SCORE AS score
MATCH (node)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete'
RETURN row.id AS entity_id, node.id AS image_id, score
