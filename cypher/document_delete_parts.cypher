// Remove a document's chunks, segments, images and tables with their relationships.
// idempotent: yes
MATCH (x)-[:PART_OF]->(d:Document {id: $id})
DETACH DELETE x
