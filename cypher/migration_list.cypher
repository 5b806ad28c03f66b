// Applied schema migrations.
// idempotent: yes
MATCH (m:Migration)
RETURN m.name AS name, m.applied_at AS applied_at
ORDER BY m.name
