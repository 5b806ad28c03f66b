// Record the steps of a plan with their exact Cypher, parameters, status and timing.
// idempotent: yes
UNWIND $rows AS row
MATCH (p:Plan {id: $plan_id})
MERGE (s:Step {id: row.id})
SET s.query_id = $query_id, s.step_id = row.step_id, s.type = row.type,
    s.modality = row.modality, s.parameters = row.parameters, s.condition = row.condition,
    s.cypher = row.cypher, s.cypher_parameters = row.cypher_parameters, s.status = row.status,
    s.error = row.error, s.duration_ms = row.duration_ms, s.result_count = row.result_count,
    s.explanation = row.explanation, s.dependencies = row.dependencies,
    s.details = row.details
MERGE (p)-[:HAS_STEP]->(s)
