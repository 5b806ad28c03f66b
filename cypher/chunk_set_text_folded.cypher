// Set the folded text (kgrag.text.search_properties) of the chunks of $rows (migration
// 0011_folded_text).
// idempotent: yes
UNWIND $rows AS row
MATCH (c:Chunk {id: row.id})
SET c.text_folded = row.value
