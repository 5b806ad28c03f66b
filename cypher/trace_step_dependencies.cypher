// Link steps to the steps they depend on.
// idempotent: yes
UNWIND $rows AS row
MATCH (a:Step {id: row.a})
MATCH (b:Step {id: row.b})
MERGE (a)-[:DEPENDS_ON]->(b)
