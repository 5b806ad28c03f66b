// Link table-row chunks to their table (idempotent).
// idempotent: yes
UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk_id}), (t:Table {id: row.table_id})
MERGE (c)-[:ROW_OF]->(t)
