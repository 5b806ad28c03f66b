// Retention: up to $batch queries asked in a session before $before (an ISO 8601 UTC time), not
// flagged, and not among the $keep_last newest turns of their session, whose traces
// traces_delete removes.
// idempotent: yes
MATCH (s:Session)-[t:HAS_TURN]->(q:Query)
WITH s, q, t
ORDER BY t.n DESC
WITH s, collect(q) AS turns
UNWIND turns[$keep_last..] AS q
WITH q
WHERE q.created_at < $before AND q.flagged_at IS NULL
RETURN q.id AS id
LIMIT $batch
