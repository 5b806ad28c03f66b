// Entities whose names match a full-text query (resolves mentions in a question): the query is
// words separated by spaces. The index only finds the candidates (Lucene on Neo4j takes the words
// as OR, RediSearch on FalkorDB as AND, each with its own score), so the names are ranked here the
// same on every engine: by the share of the words they contain, then the shortest name, then id.
// Accents are folded (kgrag.text.folding): the query comes folded, and an entity whose name has
// accents also has its folded name, in a second index (entity_name_folded), so "dvorak" finds
// "Antonín Dvořák"; the score reads the folded name.
// idempotent: yes
WITH [w IN split(toLower($query), ' ') WHERE w <> ''] AS words
CALL () {
  CALL db.index.fulltext.queryNodes('entity_name', $query) YIELD node
  RETURN node
  UNION
  CALL db.index.fulltext.queryNodes('entity_name_folded', $query) YIELD node
  RETURN node
}
WITH node, toLower(coalesce(node.name_folded, node.name)) AS name, words
WITH node, CASE size(words) WHEN 0 THEN 0.0
           ELSE toFloat(size([w IN words WHERE name CONTAINS w])) / size(words)
           END AS score
RETURN node.id AS id, node.name AS name, node.type AS type, score
ORDER BY score DESC, size(name), id
LIMIT $k
