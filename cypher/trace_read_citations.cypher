// What an answer cites.
MATCH (:Query {id: $id})-[:ANSWERED_BY]->(a:Answer)-[c:CITES]->(n)
RETURN c.marker AS marker, n.id AS node_id, labels(n)[0] AS label
ORDER BY marker
