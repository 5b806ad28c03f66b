// Give complete, unchanged documents a new ACL (the same file ingested again with another
// --acl); nothing else of them is rewritten, and replaying it changes nothing.
UNWIND $rows AS row
MATCH (d:Document {id: row.id})
WHERE d.status = 'complete'
SET d.acl = row.acl
