// A page of entities' names by id, after $after: migration 0012_folded_names folds them
// (kgrag.graph.migrations; schema maintenance, not a user's read).
// idempotent: yes
MATCH (e:Entity)
WHERE e.id > $after
RETURN e.id AS id, e.name AS name
ORDER BY id
LIMIT $limit
