// Retention: up to $batch queries asked before $before (an ISO 8601 UTC time), whose traces
// traces_delete removes.
// idempotent: yes
MATCH (q:Query)
WHERE q.created_at < $before
RETURN q.id AS id
LIMIT $batch
