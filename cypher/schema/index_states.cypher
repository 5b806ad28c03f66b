// The state of every index: ONLINE once it answers (Neo4j: POPULATING while it is built).
// idempotent: yes
SHOW INDEXES YIELD labelsOrTypes, state
RETURN labelsOrTypes[0] AS label, state
