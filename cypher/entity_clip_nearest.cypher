// Ingestion only (DEPICTS links): entities whose name's CLIP text embedding is nearest to an
// image vector, whatever documents name them. Questions use vector_entity_clip (ACL-filtered).
CALL db.index.vector.queryNodes('entity_clip', $k, $vector) YIELD node, score
RETURN node.id AS id, node.name AS name, score
