// graph_query template: readable chunks matching key terms through the full-text index
// (the lexical fallback when vector search finds nothing close enough).
// The index only finds the candidates: its own score is the engine's (Lucene BM25 on Neo4j,
// unbounded; RediSearch TF-IDF on FalkorDB), so each chunk is scored here, the same on every
// engine, by the share of the query's terms its text contains (a similarity in [0, 1], like the
// vector scores it is fused with), ties by the shorter (denser) text, then by id.
// Accents are folded (kgrag.text.folding): the query comes folded, and a chunk whose text has
// accents also has its folded text, in a second index (chunk_text_folded), so "zurich" finds
// "Zürich"; the score reads the folded text.
// idempotent: yes
WITH [t IN split(replace(replace(replace(toLower($query), '|', ' '), '"', ' '), '*', ' '), ' ')
      WHERE t <> ''] AS terms
CALL () {
  CALL db.index.fulltext.queryNodes('chunk_text', $query) YIELD node
  RETURN node
  UNION
  CALL db.index.fulltext.queryNodes('chunk_text_folded', $query) YIELD node
  RETURN node
}
MATCH (node)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
WITH node, d, terms, toLower(coalesce(node.text_folded, node.text)) AS text
WITH node, d, CASE size(terms) WHEN 0 THEN 0.0
              ELSE toFloat(size([t IN terms WHERE text CONTAINS t])) / size(terms) END AS score
RETURN node.id AS id, 'chunk' AS kind, node.text AS text, d.id AS document_id, d.title AS title,
       d.uri AS uri, node.page AS page, node.start_s AS start_s, node.end_s AS end_s,
       node.table_number AS table_number, node.sheet AS sheet, node.table_row AS table_row,
       node.section AS section, score
ORDER BY score DESC, size(text), id
LIMIT $k
