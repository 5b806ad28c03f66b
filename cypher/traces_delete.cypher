// Remove the traces of the queries $ids: each Query with its Plans, Steps and Answer, and all
// their relationships (HAS_TURN, RETURNED, CITES, DEPENDS_ON...). The documents, chunks, images
// and entities they point at stay.
// idempotent: yes
UNWIND $ids AS id
MATCH (q:Query {id: id})
OPTIONAL MATCH (q)-[:PLANNED]->(p:Plan)
OPTIONAL MATCH (s:Step {query_id: id})
OPTIONAL MATCH (q)-[:ANSWERED_BY]->(a:Answer)
WITH collect(DISTINCT q) + collect(DISTINCT p) + collect(DISTINCT s) + collect(DISTINCT a) AS doomed
UNWIND doomed AS n
DETACH DELETE n
RETURN count(*) AS deleted
