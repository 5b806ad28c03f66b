// Write a batch of entities (normalised name as id); the first display name wins.
UNWIND $rows AS row
MERGE (e:Entity {id: row.id})
ON CREATE SET e.name = row.name, e.type = row.type
