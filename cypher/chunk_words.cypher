// Migration 0010_fulltext_words: the chunks' `words`, which FalkorDB's full-text index reads
// (cypher/falkordb/chunk_words.cypher). Nothing to rewrite on Neo4j: Lucene's analyzer splits
// words at line breaks, and its index reads the text itself.
// idempotent: yes
RETURN 0 AS chunks
