// Drop RELATED links whose supporting chunks are gone.
// idempotent: yes
MATCH (:Entity)-[r:RELATED]->(:Entity)
WHERE r.weight = 0
DELETE r
