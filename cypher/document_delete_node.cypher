// Remove a document node.
// idempotent: yes
MATCH (d:Document {id: $id})
DETACH DELETE d
