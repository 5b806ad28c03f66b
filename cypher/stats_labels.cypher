// Node counts per label.
// idempotent: yes
MATCH (n)
UNWIND labels(n) AS label
RETURN label, count(*) AS n
ORDER BY label
