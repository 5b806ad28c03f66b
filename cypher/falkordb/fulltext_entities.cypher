// FalkorDB full-text procedure (RediSearch syntax for the query string).
CALL db.idx.fulltext.queryNodes('Entity', $query) YIELD node, score
RETURN node.id AS id, node.name AS name, node.type AS type, score
ORDER BY score DESC
LIMIT $k
