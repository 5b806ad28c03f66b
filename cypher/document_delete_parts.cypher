// Remove a document's chunks, segments and images with their relationships.
MATCH (x)-[:PART_OF]->(d:Document {id: $id})
DETACH DELETE x
