// Record a question (and its place in a session).
// idempotent: yes
MERGE (q:Query {id: $id})
SET q.text = $text, q.user = $user, q.groups = $groups, q.asked_by = $asked_by,
    q.created_at = $created_at,
    q.planner = $planner, q.exit_reason = $exit_reason, q.iterations = $iterations,
    q.latency_ms = $latency_ms, q.cost = $cost, q.query_class = $query_class,
    q.intent = $intent,
    q.decisions = $decisions, q.decisions_json = $decisions_json
WITH q
WHERE $session_id IS NOT NULL
MERGE (s:Session {id: $session_id})
MERGE (s)-[t:HAS_TURN {n: $turn}]->(q)
