// Write a batch of text chunks and table rows (idempotent); each row names its document_id, or $document_id
// names one for all. `section` is the list of headings the chunk is under, outermost first.
// `words` is the text with its line breaks as spaces, the property the full-text index reads:
// RediSearch does not split words at a line break, so the first word of a line
// ("tools\nsponge: soak up ...") was no term of its own and no query found it. Both `words`
// and `text_folded` come from kgrag.text.search_properties.
// idempotent: yes
UNWIND $rows AS row
MATCH (d:Document {id: coalesce(row.document_id, $document_id)})
MERGE (c:Chunk {id: row.id})
SET c.text = row.text, c.words = row.words,
    c.text_folded = row.text_folded,
    c.position = row.position, c.page = row.page, c.start_s = row.start_s,
    c.end_s = row.end_s, c.document_id = d.id, c.embedding = vecf32(row.embedding),
    c.table_id = row.table_id, c.table_number = row.table, c.sheet = row.sheet,
    c.table_row = row.table_row, c.section = row.section
MERGE (c)-[:PART_OF]->(d)
