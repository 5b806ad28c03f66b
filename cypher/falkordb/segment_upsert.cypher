// Write a batch of timed transcript segments (idempotent); each row names its document_id, or
// $document_id names one for all. `words`: the text as the full-text index reads it
// (chunk_upsert.cypher).
// idempotent: yes
UNWIND $rows AS row
MATCH (d:Document {id: coalesce(row.document_id, $document_id)})
MERGE (c:Chunk:Segment {id: row.id})
SET c.text = row.text, c.words = row.words,
    c.text_folded = row.text_folded,
    c.position = row.position, c.start_s = row.start_s, c.end_s = row.end_s,
    c.language = row.language, c.document_id = d.id, c.embedding = vecf32(row.embedding)
MERGE (c)-[:PART_OF]->(d)
