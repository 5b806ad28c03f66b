// Retention: when the ($skip + 1)-th newest query was asked (none when there are fewer); the
// queries asked at or after it are kept.
// idempotent: yes
MATCH (q:Query)
WHERE q.created_at IS NOT NULL
RETURN q.created_at AS created_at
ORDER BY created_at DESC
SKIP $skip
LIMIT 1
