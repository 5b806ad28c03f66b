// Retention: when the ($skip + 1)-th newest query asked outside a session was asked (none when
// there are fewer); those asked at or after it are kept.
// idempotent: yes
MATCH (q:Query)
WHERE q.created_at IS NOT NULL
OPTIONAL MATCH (q)<-[t:HAS_TURN]-(:Session)
WITH q, t
WHERE t IS NULL
RETURN q.created_at AS created_at
ORDER BY created_at DESC
SKIP $skip
LIMIT 1
