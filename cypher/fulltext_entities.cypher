// Entities whose names match a full-text query (resolves mentions in a question): the query is
// words separated by spaces. The index only finds the candidates (Lucene on Neo4j takes the words
// as OR, RediSearch on FalkorDB as AND, each with its own score), so the names are ranked here the
// same on every engine: by the share of the words they contain, then the shortest name, then id.
// idempotent: yes
WITH [w IN split(toLower($query), ' ') WHERE w <> ''] AS words
CALL db.index.fulltext.queryNodes('entity_name', $query) YIELD node
WITH node, CASE size(words) WHEN 0 THEN 0.0
           ELSE toFloat(size([w IN words WHERE toLower(node.name) CONTAINS w])) / size(words)
           END AS score
RETURN node.id AS id, node.name AS name, node.type AS type, score
ORDER BY score DESC, size(name), id
LIMIT $k
