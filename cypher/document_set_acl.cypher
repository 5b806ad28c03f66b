// Give complete documents a new ACL (a file ingested again with another --acl, or a changed file
// replacing a version with another ACL) and record the change beside it: an AclChange node
// (who, when, old and new ACL) linked to the document. Nothing else of the document is
// rewritten; the change id is derived from the change, so replaying the batch records it once.
// idempotent: yes
UNWIND $rows AS row
MATCH (d:Document {id: row.id})
WHERE d.status = 'complete'
SET d.acl = row.acl
MERGE (c:AclChange {id: row.change_id})
ON CREATE SET c.document_id = row.id, c.uri = d.uri, c.actor = row.actor, c.at = row.at,
  c.old_acl = row.old_acl, c.new_acl = row.acl
MERGE (c)-[:CHANGED_ACL_OF]->(d)
