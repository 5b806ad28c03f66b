// Chain consecutive chunks of a document.
UNWIND $rows AS row
MATCH (a:Chunk {id: row.a}), (b:Chunk {id: row.b})
MERGE (a)-[:NEXT]->(b)
