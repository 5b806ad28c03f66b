// Visible documents' id, title and ACL, for an evaluation that hides some documents from its
// reader (kgrag eval answers: the supporting passages of a question) and restores their ACL
// afterwards. The evaluation reads as an admin.
// idempotent: yes
MATCH (d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
RETURN d.id AS id, d.title AS title, d.acl AS acl
ORDER BY d.id
