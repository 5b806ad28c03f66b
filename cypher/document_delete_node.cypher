// Remove a document node.
MATCH (d:Document {id: $id})
DETACH DELETE d
