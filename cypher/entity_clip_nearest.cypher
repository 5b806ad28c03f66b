// Ingestion only (DEPICTS links): entities whose name's CLIP text embedding is nearest to an
// image vector, whatever documents name them. Questions use vector_entity_clip (ACL-filtered).
// Neo4j searches with a beam as wide as the count asked for: ask for at least 200 (FalkorDB's
// efRuntime) and keep the best $k, so both engines return the exact neighbours alike.
// idempotent: yes
CALL db.index.vector.queryNodes('entity_clip', CASE WHEN $k > 200 THEN $k ELSE 200 END, $vector) YIELD node, score
WITH node, score ORDER BY score DESC LIMIT $k
RETURN node.id AS id, node.name AS name, score
