// Record the answer of a query.
// idempotent: yes
MATCH (q:Query {id: $query_id})
MERGE (a:Answer {id: $id})
SET a.text = $text, a.groundedness = $groundedness, a.verdict = $verdict, a.mode = $mode
MERGE (q)-[:ANSWERED_BY]->(a)
