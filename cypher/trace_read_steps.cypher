// The steps of a query's plan with what each returned, for `kgrag trace`; each returned node
// with the document it belongs to (or is), so the reader's access can be checked now.
// idempotent: yes
MATCH (q:Query {id: $id})-[:PLANNED]->(:Plan)-[:HAS_STEP]->(s:Step)
OPTIONAL MATCH (s)-[r:RETURNED]->(n)
OPTIONAL MATCH (n)-[:PART_OF]->(d:Document)
WITH s, r, n, coalesce(d.id, CASE WHEN 'Document' IN labels(n) THEN n.id END) AS document_id
ORDER BY r.rank
RETURN s.step_id AS step_id, s.type AS type, s.modality AS modality, s.status AS status,
       s.error AS error, s.dependencies AS dependencies, s.cypher AS cypher,
       s.parameters AS parameters, s.cypher_parameters AS cypher_parameters,
       s.condition AS condition, s.duration_ms AS duration_ms, s.result_count AS result_count,
       s.explanation AS explanation, s.details AS details,
       collect({id: n.id, kind: labels(n)[0], rank: r.rank, score: r.score, document_id: document_id, text: coalesce(n.text, n.summary, n.title, n.name), section: r.section}) AS returned
ORDER BY step_id
