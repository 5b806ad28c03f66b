// Link e-mail attachments to their message's document, by source URI
// (an attachment's is the message's, '!', and its file name).
// idempotent: yes
UNWIND $rows AS row
MATCH (m:Document {uri: row.member}), (c:Document {uri: row.container})
WHERE m.status = 'complete' AND c.status = 'complete'
MERGE (m)-[:ATTACHED_TO]->(c)
