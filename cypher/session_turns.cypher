// Conversation memory: the turns of a session asked by one user, newest first.
MATCH (s:Session {id: $session_id})-[t:HAS_TURN]->(q:Query)
WHERE q.user = $user OR (q.user IS NULL AND $user IS NULL)
OPTIONAL MATCH (q)-[:ANSWERED_BY]->(a:Answer)
RETURN t.n AS n, q.id AS query_id, q.text AS text, q.resolved_text AS resolved_text,
       q.entity_ids AS entity_ids, q.entity_names AS entity_names,
       q.answer_entities AS answer_entities, a.text AS answer, a.mode AS mode
ORDER BY n DESC
LIMIT $k
