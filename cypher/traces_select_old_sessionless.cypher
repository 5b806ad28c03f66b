// Retention: up to $batch queries asked outside a session before $before (an ISO 8601 UTC
// time), not flagged, and older than $kept_from (when the newest kept ones begin; null: none
// kept), whose traces traces_delete removes.
// idempotent: yes
MATCH (q:Query)
WHERE q.created_at < $before AND q.flagged_at IS NULL
OPTIONAL MATCH (q)<-[t:HAS_TURN]-(:Session)
WITH q, t
WHERE t IS NULL AND ($kept_from IS NULL OR q.created_at < $kept_from)
RETURN q.id AS id
LIMIT $batch
