// Complete documents with the given contents, wherever they are stored: a file whose content is
// already ingested under another path (with the same ACL) is skipped as a duplicate of it.
// idempotent: yes
UNWIND $hashes AS sha
MATCH (d:Document {sha256: sha})
WHERE d.status = 'complete'
RETURN d.sha256 AS sha256, d.uri AS uri, d.acl AS acl
