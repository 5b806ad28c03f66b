// Remove every entity that nothing mentions or depicts (after recovering from a killed job).
// idempotent: yes
MATCH (e:Entity)
OPTIONAL MATCH (e)<-[s:MENTIONS|DEPICTS]-()
WITH e, count(s) AS support
WHERE support = 0
DETACH DELETE e
