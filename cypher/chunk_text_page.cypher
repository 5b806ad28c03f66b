// A page of chunks' texts by id, after $after (migration 0011_folded_text folds them; schema
// maintenance, not a user's read).
// idempotent: yes
MATCH (c:Chunk)
WHERE c.id > $after
RETURN c.id AS id, c.text AS text
ORDER BY id
LIMIT $limit
