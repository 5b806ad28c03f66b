// FalkorDB full-text procedure (RediSearch query syntax); scored as in the main template. The
// label's one full-text index holds both text and text_folded (the folded text of a chunk with
// accents), and the query searches every field of it.
// RediSearch does not split words at a line break ("Kestrin\nKestrin is" is one token), so each
// term of three letters or more is also searched as a prefix ("kestrin*" finds that token); the
// caller re-scores the candidates on its own tokens (kgrag/executor/lexical.py), so a prefix-only
// match adds no score. A version is given as a prefix for Lucene ("3.19*"); RediSearch splits
// words at a dot and cannot parse one before "*", so it gets the version's numbers ("3 19", both
// required), and the version's parts, which the query also holds, find the rest.
// idempotent: yes
WITH [t IN split(replace(replace(replace(toLower($query), '|', ' '), '"', ' '), '*', ' '), ' ')
      WHERE t <> ''] AS terms
CALL db.idx.fulltext.queryNodes('Chunk', reduce(q = '', t IN
       [x IN split($query, ' | ') | trim(replace(replace(x, '*', ''), '.', ' '))] |
       q + CASE q WHEN '' THEN '' ELSE ' | ' END + t
         + CASE WHEN size(t) >= 3 AND NOT t CONTAINS ' ' THEN '*' ELSE '' END))
YIELD node
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
