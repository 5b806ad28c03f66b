// Entities whose names match a full-text query (resolves mentions in a question).
CALL db.index.fulltext.queryNodes('entity_name', $query) YIELD node, score
RETURN node.id AS id, node.name AS name, node.type AS type, score
ORDER BY score DESC
LIMIT $k
