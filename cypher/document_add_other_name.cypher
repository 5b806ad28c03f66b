// A file skipped as a copy of a stored document (same content and ACL): its path joins the
// document's other names (also_uris), once, so what its name says finds the one stored copy.
// idempotent: yes
UNWIND $rows AS row
MATCH (d:Document {uri: row.uri})
WHERE d.sha256 = row.sha256 AND d.status = 'complete'
  AND NOT row.path IN coalesce(d.also_uris, [])
SET d.also_uris = [u IN coalesce(d.also_uris, []) WHERE u <> row.path] + [row.path]
