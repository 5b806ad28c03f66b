// FalkorDB full-text procedure (RediSearch syntax for the query string); ranked as in the main
// statement. The label's one full-text index holds both name and name_folded (the folded name
// of an entity with accents), and the query searches every field of it.
// idempotent: yes
WITH [w IN split(toLower($query), ' ') WHERE w <> ''] AS words
CALL db.idx.fulltext.queryNodes('Entity', $query) YIELD node
WITH node, toLower(coalesce(node.name_folded, node.name)) AS name, words
WITH node, CASE size(words) WHEN 0 THEN 0.0
           ELSE toFloat(size([w IN words WHERE name CONTAINS w])) / size(words)
           END AS score
RETURN node.id AS id, node.name AS name, node.type AS type, score
ORDER BY score DESC, size(name), id
LIMIT $k
