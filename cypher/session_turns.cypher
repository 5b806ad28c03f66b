// Conversation memory: the turns of a session asked with exactly these principals (the same
// user, or none, and the same set of groups), newest first: a turn asked with a group the caller
// does not hold, or by another caller who merely knows the session id, is not their memory.
// idempotent: yes
MATCH (s:Session {id: $session_id})-[t:HAS_TURN]->(q:Query)
WHERE (q.user = $user OR (q.user IS NULL AND $user IS NULL))
  AND all(g IN coalesce(q.groups, []) WHERE g IN $groups)
  AND all(g IN $groups WHERE g IN coalesce(q.groups, []))
OPTIONAL MATCH (q)-[:ANSWERED_BY]->(a:Answer)
RETURN t.n AS n, q.id AS query_id, q.text AS text, q.resolved_text AS resolved_text,
       q.entity_ids AS entity_ids, q.entity_names AS entity_names,
       q.answer_entities AS answer_entities, a.text AS answer, a.mode AS mode
ORDER BY n DESC
LIMIT $k
