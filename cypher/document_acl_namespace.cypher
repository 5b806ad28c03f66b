// Migration 0005_namespaced_acl: every bare ACL entry `x` of a document becomes `user:x` and
// `group:x` (whoever could read it before still can, and nobody else); `*` and entries already
// namespaced stay. Documents without a bare entry are not touched: running it again changes
// nothing.
// idempotent: yes
MATCH (d:Document)
WHERE any(p IN d.acl WHERE NOT (p = '*' OR p STARTS WITH 'user:' OR p STARTS WITH 'group:'))
WITH d, reduce(out = [], p IN d.acl |
  out + CASE
    WHEN p = '*' OR p STARTS WITH 'user:' OR p STARTS WITH 'group:' THEN [p]
    ELSE ['user:' + p, 'group:' + p]
  END) AS expanded
SET d.acl = reduce(out = [], p IN expanded | CASE WHEN p IN out THEN out ELSE out + [p] END)
RETURN count(d) AS documents
