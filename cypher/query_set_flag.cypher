// Flag the answer of query $id (its trace and audit are then kept by every prune), or clear the
// flag ($flagged_at, $flagged_by and $reason null). No row when there is no such query.
// idempotent: yes
MATCH (q:Query {id: $id})
SET q.flagged_at = $flagged_at, q.flagged_by = $flagged_by, q.flag_reason = $reason
RETURN q.id AS id, q.flagged_at AS flagged_at, q.flagged_by AS flagged_by,
       q.flag_reason AS reason
