// Documents left half-written or half-deleted by an interrupted job.
MATCH (d:Document)
WHERE d.status <> 'complete'
RETURN d.id AS id, d.uri AS uri, d.status AS status
