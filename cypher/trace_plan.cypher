// Record the plan a query ran.
// idempotent: yes
MATCH (q:Query {id: $query_id})
MERGE (p:Plan {id: $id})
SET p.source = $source, p.json = $json, p.fallback_reason = $fallback_reason
MERGE (q)-[:PLANNED]->(p)
