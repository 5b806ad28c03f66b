// Entities by id (exact normalised names).
// idempotent: yes
UNWIND $ids AS id
MATCH (e:Entity {id: id})
RETURN e.id AS id, e.name AS name, e.type AS type
