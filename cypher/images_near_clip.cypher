// Complete images nearest to an entity name's CLIP text vector (links earlier images to new
// entities); the caller keeps those above the DEPICTS threshold.
CALL db.index.vector.queryNodes('image_embedding', $k, $vector) YIELD node, score
MATCH (node)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete'
RETURN node.id AS id, score
