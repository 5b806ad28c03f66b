// Remove up to $batch sessions left without a turn (their questions were pruned or erased).
// idempotent: yes
MATCH (s:Session)
OPTIONAL MATCH (s)-[t:HAS_TURN]->(:Query)
WITH s, count(t) AS turns
WHERE turns = 0
WITH s
LIMIT $batch
DETACH DELETE s
RETURN count(*) AS deleted
