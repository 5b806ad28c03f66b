// The documents stored inside a container (an archive's members, a message's attachments, and
// theirs in turn), so that deleting an archive or a message deletes what it holds.
// idempotent: yes
MATCH (m:Document)-[:CONTAINED_IN|ATTACHED_TO*1..8]->(c:Document {id: $id})
RETURN DISTINCT m.id AS id
