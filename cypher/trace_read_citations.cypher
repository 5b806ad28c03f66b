// What an answer cites, with the document each cited node belongs to (or is), so the reader's
// access can be checked now.
// idempotent: yes
MATCH (:Query {id: $id})-[:ANSWERED_BY]->(a:Answer)-[c:CITES]->(n)
OPTIONAL MATCH (n)-[:PART_OF]->(d:Document)
RETURN c.marker AS marker, n.id AS node_id, labels(n)[0] AS label, c.section AS section,
       coalesce(d.id, CASE WHEN 'Document' IN labels(n) THEN n.id END) AS document_id
ORDER BY marker
