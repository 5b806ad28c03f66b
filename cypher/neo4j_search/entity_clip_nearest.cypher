// Ingestion only (DEPICTS links): entities whose name's CLIP text embedding is nearest to an
// image vector, whatever documents name them. Questions use vector_entity_clip (ACL-filtered).
// Neo4j 2026.01+ SEARCH form of cypher/entity_clip_nearest.cypher.
// The search is at least 200 wide and the best $k are kept, as in the base statement.
// idempotent: yes
CYPHER 25
MATCH (node:Entity)
  SEARCH node IN (VECTOR INDEX entity_clip FOR $vector LIMIT CASE WHEN $k > 200 THEN $k ELSE 200 END)
  SCORE AS score
WITH node, score ORDER BY score DESC LIMIT $k
RETURN node.id AS id, node.name AS name, score
