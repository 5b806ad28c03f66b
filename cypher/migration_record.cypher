// Record one applied migration.
// idempotent: yes
MERGE (m:Migration {name: $name})
ON CREATE SET m.applied_at = $applied_at
