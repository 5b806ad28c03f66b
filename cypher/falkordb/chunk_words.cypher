// Migration 0010_fulltext_words: each chunk written before it gets its `words`, its text with
// line breaks as spaces (as chunk_upsert.cypher now writes them), the property the full-text
// index reads: RediSearch does not split words at a line break. Chunks that have them are not
// touched: running it again changes nothing.
// idempotent: yes
MATCH (c:Chunk)
WHERE c.words IS NULL AND c.text IS NOT NULL
SET c.words = replace(replace(c.text, '\r', ' '), '\n', ' ')
RETURN count(c) AS chunks
