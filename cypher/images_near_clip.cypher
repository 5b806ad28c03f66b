// For each entity name's CLIP text vector, the nearest images of complete documents (links
// earlier images to entities named only now); the caller keeps those above the threshold.
UNWIND $rows AS row
CALL db.index.vector.queryNodes('image_embedding', $k, row.vector) YIELD node, score
MATCH (node)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete'
RETURN row.id AS entity_id, node.id AS image_id, score
