// A query with its plan and answer, for `kgrag trace`; its flag (kgrag flag) for the audit.
// idempotent: yes
MATCH (q:Query {id: $id})
OPTIONAL MATCH (q)-[:PLANNED]->(p:Plan)
OPTIONAL MATCH (q)-[:ANSWERED_BY]->(a:Answer)
RETURN q.id AS id, q.text AS text, q.user AS user, q.asked_by AS asked_by,
       q.created_at AS created_at,
       q.planner AS planner, q.exit_reason AS exit_reason, q.iterations AS iterations,
       q.latency_ms AS latency_ms, q.cost AS cost, q.query_class AS query_class, q.intent AS intent,
       q.groups AS groups, q.decisions_json AS decisions_json, p.id AS plan_id, p.source AS plan_source,
       p.json AS plan_json, p.fallback_reason AS fallback_reason, a.text AS answer,
       a.groundedness AS groundedness, a.verdict AS verdict, a.mode AS answer_mode,
       q.flagged_at AS flagged_at, q.flagged_by AS flagged_by, q.flag_reason AS flag_reason
