// Set the words (the text with line breaks as spaces; kgrag.text.search_properties) of the
// chunks of $rows: migration 0010_fulltext_words, on FalkorDB only (its full-text index reads
// them; Lucene on Neo4j splits words at line breaks and reads the text).
// idempotent: yes
UNWIND $rows AS row
MATCH (c:Chunk {id: row.id})
SET c.words = row.value
