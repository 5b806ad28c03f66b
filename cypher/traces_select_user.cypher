// Erasure: up to $batch queries asked as user $user, whose traces traces_delete removes.
// idempotent: yes
MATCH (q:Query)
WHERE q.user = $user
RETURN q.id AS id
LIMIT $batch
