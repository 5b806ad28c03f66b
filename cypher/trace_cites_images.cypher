// Link an answer to the images it cites, with the citation marker.
// idempotent: yes
UNWIND $rows AS row
MATCH (a:Answer {id: $answer_id})
MATCH (n:Image {id: row.id})
MERGE (a)-[c:CITES]->(n)
SET c.marker = row.marker
