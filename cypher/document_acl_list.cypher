// Every complete document's id, title and ACL, for an evaluation that hides some documents from
// its reader (kgrag eval answers --unanswerable) and restores their ACL afterwards.
MATCH (d:Document)
WHERE d.status = 'complete'
RETURN d.id AS id, d.title AS title, d.acl AS acl
ORDER BY d.id
