// The highest turn number of a session (0 when it has none).
// idempotent: yes
OPTIONAL MATCH (s:Session {id: $session_id})-[t:HAS_TURN]->(:Query)
RETURN coalesce(max(t.n), 0) AS n
