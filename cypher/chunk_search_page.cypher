// A page of chunks' texts by id, after $after: migrations 0010_fulltext_words and
// 0011_folded_text compute their search properties from them (kgrag.graph.migrations; schema
// maintenance, not a user's read).
// idempotent: yes
MATCH (c:Chunk)
WHERE c.id > $after
RETURN c.id AS id, c.text AS text
ORDER BY id
LIMIT $limit
