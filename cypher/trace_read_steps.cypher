// The steps of a query's plan with what each returned, for `kgrag trace`.
MATCH (q:Query {id: $id})-[:PLANNED]->(:Plan)-[:HAS_STEP]->(s:Step)
OPTIONAL MATCH (s)-[r:RETURNED]->(n)
WITH s, r, n
ORDER BY r.rank
RETURN s.step_id AS step_id, s.type AS type, s.modality AS modality, s.status AS status,
       s.error AS error, s.dependencies AS dependencies, s.cypher AS cypher,
       s.parameters AS parameters, s.cypher_parameters AS cypher_parameters,
       s.condition AS condition, s.duration_ms AS duration_ms, s.result_count AS result_count,
       s.explanation AS explanation, s.details AS details,
       collect({id: n.id, kind: labels(n)[0], rank: r.rank, score: r.score, text: coalesce(n.text, n.summary, n.title, n.name)}) AS returned
ORDER BY step_id
