// Make a batch of fully written documents visible to readers (document_complete for many).
// idempotent: yes
UNWIND $rows AS row
MATCH (d:Document {id: row.id})
SET d.status = 'complete', d.chunk_count = row.chunk_count, d.image_count = row.image_count
