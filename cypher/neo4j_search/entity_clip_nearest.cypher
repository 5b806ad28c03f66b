// Ingestion only (DEPICTS links): entities whose name's CLIP text embedding is nearest to an
// image vector, whatever documents name them. Questions use vector_entity_clip (ACL-filtered).
// Neo4j 2026.01+ SEARCH form of cypher/entity_clip_nearest.cypher.
CYPHER 25
MATCH (node:Entity)
  SEARCH node IN (VECTOR INDEX entity_clip FOR $vector LIMIT $k) SCORE AS score
RETURN node.id AS id, node.name AS name, score
