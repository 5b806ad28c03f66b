// Write a batch of images (idempotent); each row names its document_id, or $document_id names
// one for all.
// idempotent: yes
UNWIND $rows AS row
MATCH (d:Document {id: coalesce(row.document_id, $document_id)})
MERGE (i:Image {id: row.id})
SET i.uri = row.uri, i.width = row.width, i.height = row.height, i.page = row.page,
    i.caption = row.caption, i.document_id = d.id, i.embedding = vecf32(row.embedding)
MERGE (i)-[:PART_OF]->(d)
