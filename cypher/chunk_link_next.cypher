// Chain consecutive chunks of a document.
// idempotent: yes
UNWIND $rows AS row
MATCH (a:Chunk {id: row.a}), (b:Chunk {id: row.b})
MERGE (a)-[:NEXT]->(b)
