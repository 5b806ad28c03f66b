// Entities a document's chunks mention or its images depict.
// idempotent: yes
MATCH (d:Document {id: $id})<-[:PART_OF]-(x)-[:MENTIONS|DEPICTS]->(e:Entity)
RETURN DISTINCT e.id AS id
