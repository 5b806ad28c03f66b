// FalkorDB full-text procedure (RediSearch syntax for the query string); ranked as in the main
// statement.
// idempotent: yes
WITH [w IN split(toLower($query), ' ') WHERE w <> ''] AS words
CALL db.idx.fulltext.queryNodes('Entity', $query) YIELD node
WITH node, CASE size(words) WHEN 0 THEN 0.0
           ELSE toFloat(size([w IN words WHERE toLower(node.name) CONTAINS w])) / size(words)
           END AS score
RETURN node.id AS id, node.name AS name, node.type AS type, score
ORDER BY score DESC, size(name), id
LIMIT $k
