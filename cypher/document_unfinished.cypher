// Documents a killed or failed job left half written or half deleted (not yet complete).
// idempotent: yes
MATCH (d:Document)
WHERE d.status IS NULL OR d.status <> 'complete'
RETURN d.id AS id, d.uri AS uri, d.status AS status
ORDER BY d.id
