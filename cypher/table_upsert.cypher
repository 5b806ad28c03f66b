// Write a batch of tables (idempotent); each row names its document_id. A table's rows are
// chunks linked to it by ROW_OF (table_link_rows).
// idempotent: yes
UNWIND $rows AS row
MATCH (d:Document {id: row.document_id})
MERGE (t:Table {id: row.id})
SET t.number = row.number, t.page = row.page, t.sheet = row.sheet, t.caption = row.caption,
    t.header = row.header, t.row_count = row.row_count, t.column_count = row.column_count,
    t.document_id = d.id
MERGE (t)-[:PART_OF]->(d)
