// Of the given documents, those the caller may read now (a stored trace is shown through it).
// idempotent: yes
UNWIND $ids AS id
MATCH (d:Document {id: id})
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
RETURN d.id AS id
