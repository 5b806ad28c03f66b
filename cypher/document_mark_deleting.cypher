// Hide a document from readers before its parts are removed.
// idempotent: yes
MATCH (d:Document {id: $id})
SET d.status = 'deleting'
