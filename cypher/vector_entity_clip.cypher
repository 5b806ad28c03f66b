// Entities whose name's CLIP text embedding is nearest to a vector (images -> entities).
CALL db.index.vector.queryNodes('entity_clip', $k, $vector) YIELD node, score
RETURN node.id AS id, node.name AS name, score
