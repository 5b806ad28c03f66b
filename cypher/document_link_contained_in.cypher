// Link members of archives and mailboxes to their container's document, by source URI
// (a member's is the container's, '!', and its name there).
// idempotent: yes
UNWIND $rows AS row
MATCH (m:Document {uri: row.member}), (c:Document {uri: row.container})
WHERE m.status = 'complete' AND c.status = 'complete'
MERGE (m)-[:CONTAINED_IN]->(c)
