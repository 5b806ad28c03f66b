// Applied schema migrations.
MATCH (m:Migration)
RETURN m.name AS name, m.applied_at AS applied_at
ORDER BY m.name
