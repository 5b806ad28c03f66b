// Link an answer to the documents it cites (answers of document tools), with the marker.
// idempotent: yes
UNWIND $rows AS row
MATCH (a:Answer {id: $answer_id})
MATCH (n:Document {id: row.id})
MERGE (a)-[c:CITES]->(n)
SET c.marker = row.marker
